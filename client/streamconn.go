package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"albedo/wire"
)

// connectOnce finds the daemon, connects, says hello with every
// subscription, and serves the connection until it is lost. connected says
// whether the hello succeeded. explicit: a user asked for this attempt
// (Client.discover).
func (st *Stream) connectOnce(explicit bool) (connected bool, err error) {
	snap, err := st.c.discover(st.ctx, explicit)
	if err != nil {
		return false, err
	}
	// The hello rides in the upgrade's request when it fits: the daemon
	// answers it with the 101, a round trip sooner, and the subscriptions
	// added or dropped during the dial follow it as commands (adopt). A
	// daemon that does not take it gets it as the first frame.
	sc := &streamConn{st: st, pending: map[int64]func(wire.Reply){}}
	helloDone := make(chan error, 1)
	hs := st.helloSnap()
	id := sc.register(sc.onHello(hs, helloDone))
	early := base64.RawURLEncoding.EncodeToString(wire.Encode(sc.helloCommand(id, hs)))
	if len(early) > wire.MaxHelloHeader {
		early = ""
	}
	if err := st.dial(sc, snap, early); err != nil {
		st.c.invalidate(snap)
		return false, err
	}
	defer sc.ws.CloseNow()

	if sc.helloTaken {
		err = sc.adopt(hs)
	} else {
		sc.forget(id)
		err = sc.hello(helloDone)
	}
	if err != nil {
		st.detach(sc)
		st.c.invalidate(snap)
		return false, err
	}
	lost := make(chan error, 1)
	go func() { lost <- sc.readLoop() }()

	select {
	case err := <-helloDone:
		if err != nil {
			st.detach(sc)
			return false, err
		}
	case err := <-lost:
		st.detach(sc)
		st.c.invalidate(snap)
		return false, err
	case <-st.ctx.Done():
		sc.ws.CloseNow()
		<-lost
		return false, st.ctx.Err()
	}
	st.attached(sc, snap)
	return true, sc.serve(snap, lost)
}

// dial opens sc's websocket to snap's daemon, with hello in the request
// if early is not empty.
func (st *Stream) dial(sc *streamConn, snap Snapshot, early string) error {
	dctx, cancel := context.WithTimeout(st.ctx, 10*time.Second)
	defer cancel()
	sc.heard.Store(time.Now().UnixNano())
	// The client's own HTTP client (its proxy and TLS settings), without
	// a timeout: the dial has its context.
	hc := *st.c.http
	hc.Timeout = 0
	header := http.Header{"Authorization": {"Bearer " + snap.Token}}
	if early != "" {
		header.Set(wire.HelloHeader, early)
	}
	ws, resp, err := websocket.Dial(dctx, WSURL(snap.BaseURL), &websocket.DialOptions{
		HTTPClient:   &hc,
		HTTPHeader:   header,
		Subprotocols: []string{wire.Subprotocol},
		OnPingReceived: func(context.Context, []byte) bool {
			sc.heard.Store(time.Now().UnixNano())
			return true
		},
	})
	if err != nil {
		err = fmt.Errorf("dial %s: %w", snap.BaseURL, err)
		if resp != nil && resp.StatusCode == http.StatusUnauthorized {
			return &refusedError{token: snap.Token, err: err}
		}
		return err
	}
	ws.SetReadLimit(-1) // the daemon is trusted; its frames may be large
	sc.ws = ws
	sc.helloTaken = early != "" && resp.Header.Get(wire.HelloHeader) == wire.HelloTaken
	return nil
}

// attached finishes a connection whose hello succeeded: serve (for a bot),
// the Connected state, and the inputs that still wait for a receipt, sent
// again in the order they were first sent, before any input sent after
// them (the connection is ready for those once these are written).
func (st *Stream) attached(sc *streamConn, snap Snapshot) {
	if st.opts.OnTurn != nil || st.opts.OnTool != nil {
		turns := st.opts.OnTurn != nil
		cmd := wire.Command{Op: wire.OpServe}
		if st.opts.OnTool != nil {
			cmd.Tools, cmd.Turns = st.opts.Tools, &turns
		}
		sc.command(cmd, nil)
	}
	if st.opts.OnFeed != nil {
		sc.startFeed()
	}
	role, _ := sc.role.Load().(wire.TokenRole)
	st.setState(State{Phase: Connected, Snap: snap, Role: role})
	st.mu.Lock()
	sc.ready = true
	st.mu.Unlock()
	st.flush()
}

// serve keeps an attached connection until it is lost or the stream
// closes; a silent daemon (no ping for two heartbeats) counts as lost.
func (sc *streamConn) serve(snap Snapshot, lost <-chan error) error {
	st := sc.st
	hb := time.Duration(sc.heartbeatMS.Load()) * time.Millisecond
	if hb <= 0 {
		hb = wire.HeartbeatMS * time.Millisecond
	}
	tick := time.NewTicker(hb / 2)
	defer tick.Stop()
	for {
		select {
		case err := <-lost:
			st.detach(sc)
			st.c.invalidate(snap)
			if websocket.CloseStatus(err) == wire.CloseBadToken {
				return &refusedError{token: snap.Token, err: err}
			}
			return err
		case <-tick.C:
			if time.Since(time.Unix(0, sc.heard.Load())) > 2*hb {
				sc.ws.CloseNow()
			}
		case <-st.ctx.Done():
			sc.ws.Close(websocket.StatusNormalClosure, "client closing")
			<-lost
			st.detach(sc)
			return st.ctx.Err()
		}
	}
}

func (st *Stream) detach(sc *streamConn) {
	st.mu.Lock()
	if st.conn == sc {
		st.conn = nil
	}
	st.mu.Unlock()
}

// streamConn is one websocket of a Stream.
type streamConn struct {
	st *Stream
	ws *websocket.Conn

	writeMu    sync.Mutex // orders writes: hello first
	ready      bool       // hello succeeded: inputs may be sent on it (guarded by st.mu)
	helloTaken bool       // the daemon took the hello the upgrade carried (set by dial)

	mu      sync.Mutex
	nextID  int64
	pending map[int64]func(wire.Reply)

	heard       atomic.Int64 // unix nanos of the last frame or ping
	heartbeatMS atomic.Int64
	role        atomic.Value // wire.TokenRole, as hello answered
}

// helloSnap is what a hello attaches: the stream's subscriptions, and
// what it says of each.
type helloSnap struct {
	subs   []*Subscription
	bodies []wire.Sub
}

func (st *Stream) helloSnap() helloSnap {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.helloSnapLocked()
}

func (st *Stream) helloSnapLocked() helloSnap {
	hs := helloSnap{subs: make([]*Subscription, 0, len(st.subs)), bodies: make([]wire.Sub, 0, len(st.subs))}
	for _, s := range st.subs {
		hs.subs = append(hs.subs, s)
		hs.bodies = append(hs.bodies, s.sub())
	}
	return hs
}

func (sc *streamConn) helloCommand(id int64, hs helloSnap) wire.Command {
	return wire.Command{ID: id, Op: wire.OpHello, Client: sc.st.c.opts.Name, Name: sc.st.c.opts.Guest, Subs: hs.bodies, Sessions: sc.st.opts.OnSessions != nil}
}

// onHello is the hello's reply handler: each sub's answer to its
// subscription, then done.
func (sc *streamConn) onHello(hs helloSnap, done chan<- error) func(wire.Reply) {
	return func(r wire.Reply) {
		if !r.OK {
			done <- fmt.Errorf("hello refused: %w", r.Error)
			return
		}
		sc.heartbeatMS.Store(r.HeartbeatMS)
		sc.role.Store(r.Role)
		for i, sr := range r.Subs {
			if i < len(hs.subs) {
				hs.subs[i].replied(sr)
			}
		}
		done <- nil
	}
}

// hello attaches every subscription in a frame. It holds writeMu from
// before the connection becomes the stream's current one until hello is
// written, so no command can precede it.
func (sc *streamConn) hello(done chan<- error) error {
	sc.writeMu.Lock()
	defer sc.writeMu.Unlock()
	st := sc.st
	st.mu.Lock()
	hs := st.helloSnapLocked()
	st.conn = sc
	st.mu.Unlock()
	id := sc.register(sc.onHello(hs, done))
	return sc.write(wire.Encode(sc.helloCommand(id, hs)))
}

// adopt makes the connection the stream's current one after the daemon
// took the hello its upgrade carried (snapshot hs): what changed among
// the subscriptions during the dial follows the hello as commands — a
// sub for each one added or replaced, an unsub for each one dropped, a
// watch for each one whose watching changed — before any other command.
func (sc *streamConn) adopt(hs helloSnap) error {
	sc.writeMu.Lock()
	defer sc.writeMu.Unlock()
	st := sc.st
	st.mu.Lock()
	st.conn = sc
	said := make(map[*Subscription]wire.Sub, len(hs.subs))
	for i, s := range hs.subs {
		said[s] = hs.bodies[i]
	}
	var follow []wire.Command
	var added []*Subscription
	for _, s := range hs.subs {
		if st.subs[s.session] == nil {
			follow = append(follow, wire.Command{Op: wire.OpUnsub, Session: s.session})
		}
	}
	for _, s := range st.subs {
		b, ok := said[s]
		switch now := s.sub(); {
		case !ok:
			added = append(added, s)
		case (b.Watch == nil) != (now.Watch == nil):
			follow = append(follow, wire.Command{Op: wire.OpWatch, Session: s.session, Watch: new(now.Watch == nil)})
		}
	}
	st.mu.Unlock()
	for _, cmd := range follow {
		if err := sc.commandLocked(cmd, nil); err != nil {
			return err
		}
	}
	for _, s := range added {
		if err := sc.commandLocked(s.subCommand()); err != nil {
			return err
		}
	}
	return nil
}

func (sc *streamConn) register(fn func(wire.Reply)) int64 {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.nextID++
	sc.pending[sc.nextID] = fn
	return sc.nextID
}

// forget drops the reply handler of a command that was never sent.
func (sc *streamConn) forget(id int64) {
	sc.mu.Lock()
	delete(sc.pending, id)
	sc.mu.Unlock()
}

func (sc *streamConn) write(b []byte) error {
	ctx, cancel := context.WithTimeout(sc.st.ctx, 10*time.Second)
	defer cancel()
	return sc.ws.Write(ctx, websocket.MessageText, b)
}

// command sends cmd with a fresh id; onReply (may be nil) gets the reply.
func (sc *streamConn) command(cmd wire.Command, onReply func(wire.Reply)) {
	sc.writeMu.Lock()
	_ = sc.commandLocked(cmd, onReply)
	sc.writeMu.Unlock()
}

// commandLocked is command for a caller that holds writeMu.
func (sc *streamConn) commandLocked(cmd wire.Command, onReply func(wire.Reply)) error {
	if onReply == nil {
		onReply = func(wire.Reply) {}
	}
	cmd.ID = sc.register(onReply)
	err := sc.write(wire.Encode(cmd))
	if err != nil {
		sc.ws.CloseNow() // the read loop notices and the stream reconnects
	}
	return err
}

// subscribe sends a sub for s on this connection.
func (sc *streamConn) subscribe(s *Subscription) {
	sc.command(s.subCommand())
}

// subCommand is the sub that attaches s, with its reply's handler.
func (s *Subscription) subCommand() (wire.Command, func(wire.Reply)) {
	b := s.sub()
	return wire.Command{Op: wire.OpSub, Session: b.Session, After: b.After, Epoch: b.Epoch, Window: b.Window, Watch: b.Watch},
		func(r wire.Reply) { s.replied(r.Sub(s.session)) }
}

// sendInput sends a pending input; a retryable refusal leaves it pending
// for the next connection, or, if the daemon's store failed for now
// (unavailable), sends it again on this one after a backoff.
func (sc *streamConn) sendInput(p *pendingSend) {
	sc.command(wire.Command{Op: p.op, Session: p.session, InputID: p.inputID, Text: p.text, Attachments: p.atts}, func(r wire.Reply) {
		if !r.OK && r.Error != nil && r.Error.Retryable {
			if r.Error.Code == wire.CodeUnavailable {
				sc.st.resendLater(p, sc)
			}
			return
		}
		sc.st.mu.Lock()
		if sc.st.sends[p.inputID] == p {
			delete(sc.st.sends, p.inputID)
		}
		sc.st.mu.Unlock()
		if !r.OK {
			p.resolve(wire.Receipt{}, r.Error)
			return
		}
		if r.Receipt == nil {
			p.resolve(wire.Receipt{}, errors.New("send: reply without a receipt"))
			return
		}
		p.resolve(*r.Receipt, nil)
	})
}

// readLoop dispatches frames until the connection ends.
func (sc *streamConn) readLoop() error {
	for {
		_, msg, err := sc.ws.Read(sc.st.ctx)
		if err != nil {
			return err
		}
		sc.heard.Store(time.Now().UnixNano())
		for line := range bytes.SplitSeq(msg, []byte{'\n'}) {
			if len(line) == 0 {
				continue
			}
			if err := sc.dispatch(line); err != nil {
				return err
			}
		}
	}
}

// dispatch decodes one frame and hands it on: a reply to the command
// waiting for it, a turn to OnTurn, sessions to OnSessions, a push to its
// subscription.
func (sc *streamConn) dispatch(raw []byte) error {
	f, err := wire.DecodeFrame(raw)
	if err != nil {
		return fmt.Errorf("daemon sent a bad frame: %w", err)
	}
	switch {
	case f.Reply != nil:
		sc.mu.Lock()
		fn := sc.pending[f.Reply.ID]
		delete(sc.pending, f.Reply.ID)
		sc.mu.Unlock()
		if fn != nil {
			fn(*f.Reply)
		}
	case f.Turn != nil:
		if sc.st.opts.OnTurn != nil {
			sc.st.opts.OnTurn(*f.Turn)
		}
	case f.Tool != nil:
		if sc.st.opts.OnTool != nil {
			sc.st.opts.OnTool(*f.Tool)
		}
	case f.Op == wire.PushSessions:
		if sc.st.opts.OnSessions != nil {
			sc.st.opts.OnSessions()
		}
	case f.Feed != nil:
		if sc.st.opts.OnFeed != nil {
			sc.st.feedPush(f.Feed)
		}
	case f.Read != nil:
		if sc.st.opts.OnFeed != nil {
			sc.st.opts.OnFeed(FeedUpdate{Read: f.Read})
		}
		sc.deliver(Item{Frame: f, Raw: raw})
	case f.Session != "":
		sc.deliver(Item{Frame: f, Raw: raw})
	}
	// bye: the close follows and we reconnect. An op this client does not
	// know (a newer daemon's) is skipped.
	return nil
}

// deliver hands a push to its session's subscription.
func (sc *streamConn) deliver(it Item) {
	sc.st.mu.Lock()
	s := sc.st.subs[it.Session]
	sc.st.mu.Unlock()
	if s == nil {
		return
	}
	it.Raw = append([]byte(nil), it.Raw...)
	if !s.push(it) {
		// A gap can only mean this client lost track: ask again from the
		// cursor it has.
		sc.subscribe(s)
		return
	}
	if it.Op != wire.PushReset {
		return
	}
	var end *wire.Error // the reasons that end a subscription: nothing follows them
	switch it.Reset.Reason {
	case wire.ResetDeleted:
		end = wire.Errorf(wire.CodeNotFound, "session %q was deleted", s.session)
	case wire.ResetRevoked:
		end = wire.Errorf(wire.CodeForbidden, "access to session %q was taken back", s.session)
	default:
		return
	}
	sc.st.mu.Lock()
	if sc.st.subs[s.session] == s {
		delete(sc.st.subs, s.session)
	}
	sc.st.mu.Unlock()
	s.end(end)
}
