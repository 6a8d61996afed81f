package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"albedo/api/wire"
)

// Stream is one websocket to the daemon carrying any number of session
// subscriptions, kept alive across daemon restarts: on any loss it
// reconnects with jittered backoff, re-reads daemon.json, and reattaches
// every subscription from its own cursor in one hello. Its methods may be
// called from any goroutine.
type Stream struct {
	// static after construction
	c      *Client
	opts   StreamOptions
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	subs  map[string]*Subscription
	sends map[string]*pendingSend // by input_id: sent, no receipt yet
	conn  *streamConn             // the live connection, nil while down
	state State
	err   error // terminal
}

type pendingSend struct {
	op                     string // send or post
	session, inputID, text string
	done                   chan struct{}
	once                   sync.Once
	receipt                wire.Receipt
	err                    error
}

func (p *pendingSend) resolve(r wire.Receipt, err error) {
	p.once.Do(func() { p.receipt, p.err = r, err; close(p.done) })
}

// Stream opens the client's multiplexed stream. It connects in the
// background; Subscribe and Send work before it is connected.
func (c *Client) Stream(opts StreamOptions) *Stream {
	ctx, cancel := context.WithCancel(context.Background())
	st := &Stream{c: c, opts: opts, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		subs: map[string]*Subscription{}, sends: map[string]*pendingSend{}}
	go st.run()
	return st
}

// State returns the connection state.
func (st *Stream) State() State {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.state
}

// Err returns the terminal error once the stream has given up (an error
// matching ErrUnavailable), else nil.
func (st *Stream) Err() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.err
}

// Done is closed when the stream has stopped (Close or budget spent).
func (st *Stream) Done() <-chan struct{} { return st.done }

// Close ends the stream and all its subscriptions. Safe to call twice.
func (st *Stream) Close() error {
	st.cancel()
	<-st.done
	return nil
}

func (st *Stream) setState(s State) {
	st.mu.Lock()
	st.state = s
	st.mu.Unlock()
	if st.opts.OnState != nil {
		st.opts.OnState(s)
	}
}

// Send submits an input through the stream and waits for its receipt. An
// input that has no receipt when the connection drops is sent again, with
// the same input_id, on the next connection; the daemon accepts it once.
func (st *Stream) Send(ctx context.Context, session, inputID, text string) (wire.Receipt, error) {
	return st.submit(ctx, wire.OpSend, session, inputID, text)
}

// Post puts a bot's message into a session (a bot token only): it starts no
// turn. Like Send, it is re-sent with the same input_id until receipted.
func (st *Stream) Post(ctx context.Context, session, inputID, text string) (wire.Receipt, error) {
	return st.submit(ctx, wire.OpPost, session, inputID, text)
}

// Reply answers a turn handed to OnTurn: text streams to the viewers, done
// commits the reply, a non-empty errText fails the turn. It needs the
// connection the turn came on; after a loss the daemon hands the turn out
// again (OnTurn is called anew) and Reply returns an error.
func (st *Stream) Reply(ctx context.Context, turnID, text string, done bool, errText string) error {
	st.mu.Lock()
	conn := st.conn
	st.mu.Unlock()
	if conn == nil {
		return fmt.Errorf("reply to %s: not connected", turnID)
	}
	res := make(chan wire.Frame, 1)
	conn.command(wire.Command{Op: wire.OpReply, TurnID: turnID, Text: text, Done: done, Error: errText}, func(f wire.Frame) { res <- f })
	select {
	case f := <-res:
		if !f.OK {
			return f.Error
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (st *Stream) submit(ctx context.Context, op, session, inputID, text string) (wire.Receipt, error) {
	p := &pendingSend{op: op, session: session, inputID: inputID, text: text, done: make(chan struct{})}
	st.mu.Lock()
	if st.err != nil {
		err := st.err
		st.mu.Unlock()
		return wire.Receipt{}, err
	}
	st.sends[inputID] = p
	conn := st.conn
	st.mu.Unlock()
	if conn != nil {
		conn.sendInput(p)
	}
	select {
	case <-p.done:
		return p.receipt, p.err
	case <-ctx.Done():
		st.mu.Lock()
		if st.sends[inputID] == p {
			delete(st.sends, inputID)
		}
		st.mu.Unlock()
		return wire.Receipt{}, ctx.Err()
	}
}

// run keeps a connection up until Close or the budget is spent.
func (st *Stream) run() {
	defer close(st.done)
	defer st.finish(ErrStreamClosed)
	b := NewBackoff(st.opts.Backoff)
	lostAt := time.Now()
	st.setState(State{Phase: Connecting})
	for {
		connected, err := st.connectOnce()
		if st.ctx.Err() != nil {
			return
		}
		if connected {
			lostAt = time.Now()
			b.Reset()
		}
		if st.opts.Budget > 0 && time.Since(lostAt) >= st.opts.Budget {
			// The state first, so that whoever sees a subscription end
			// already finds the stream unavailable.
			ue := &unavailableError{budget: st.opts.Budget, last: err}
			st.setState(State{Phase: Unavailable, Err: ue})
			st.finish(ue)
			return
		}
		d := b.Next()
		st.setState(State{Phase: Reconnecting, Attempt: b.Attempt(), Next: d, Err: err})
		if !st.wait(d, b, err, st.c.daemonBoot()) {
			return
		}
	}
}

// newDaemonPoll is how often a reconnecting stream looks at daemon.json.
const newDaemonPoll = 50 * time.Millisecond

// wait sleeps d before the next attempt, or less when a new daemon
// appears: the backoff grows while the daemon is down, and a stream that
// failed a few times would otherwise sleep for seconds after it is back.
// A daemon.json naming another boot of a live process is a new daemon: the
// schedule starts over and the wait shrinks to a first delay (full jitter,
// ≤ 250 ms), so streams come back spread over that window, not at once.
// seen is the boot daemon.json named when the wait began ("" for none).
// It returns false when the stream is closed. The poll is a stat; the file
// is read only when it has changed.
func (st *Stream) wait(d time.Duration, b *Backoff, lastErr error, seen string) bool {
	path := filepath.Join(st.c.opts.Home, DaemonFile)
	var version stamp // the first poll reads the file, whatever its stamp
	t := time.NewTimer(d)
	defer t.Stop()
	poll := time.NewTicker(newDaemonPoll)
	defer poll.Stop()
	for {
		select {
		case <-st.ctx.Done():
			return false
		case <-t.C:
			return true
		case <-poll.C:
			if v := fileStamp(path); v == version {
				continue
			} else {
				version = v
			}
			info, err := ReadDaemonFile(st.c.opts.Home)
			if err != nil || info.Boot == seen || !ProcessAlive(info.PID) {
				continue
			}
			seen = info.Boot
			b.Reset()
			d := b.Next()
			t.Reset(d)
			st.setState(State{Phase: Reconnecting, Attempt: b.Attempt(), Next: d, Err: lastErr})
		}
	}
}

// daemonBoot is the boot daemon.json names now, or "" if there is none.
func (c *Client) daemonBoot() string {
	if info, err := ReadDaemonFile(c.opts.Home); err == nil {
		return info.Boot
	}
	return ""
}

// stamp identifies a version of a file (missing: the zero stamp).
type stamp struct {
	mod  time.Time
	size int64
	ino  uint64
}

func fileStamp(path string) stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}
	}
	s := stamp{mod: fi.ModTime(), size: fi.Size()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino = st.Ino // daemon.json is replaced by a rename: a new inode
	}
	return s
}

// finish ends every subscription and pending send with err (once).
func (st *Stream) finish(err error) {
	st.mu.Lock()
	if st.err == nil {
		st.err = err
	}
	err = st.err
	subs, sends := st.subs, st.sends
	st.subs, st.sends = map[string]*Subscription{}, map[string]*pendingSend{}
	st.conn = nil
	st.mu.Unlock()
	for _, s := range subs {
		s.end(err)
	}
	for _, p := range sends {
		p.resolve(wire.Receipt{}, err)
	}
}

// connectOnce finds the daemon, connects, says hello with every
// subscription, and serves the connection until it is lost. connected says
// whether the hello succeeded.
func (st *Stream) connectOnce() (connected bool, err error) {
	snap, err := st.c.Discover(st.ctx)
	if err != nil {
		return false, err
	}
	dctx, cancel := context.WithTimeout(st.ctx, 10*time.Second)
	defer cancel()
	sc := &streamConn{st: st, pending: map[int64]func(wire.Frame){}}
	sc.heard.Store(time.Now().UnixNano())
	ws, _, err := websocket.Dial(dctx, strings.Replace(snap.BaseURL, "http://", "ws://", 1)+"/v1/ws", &websocket.DialOptions{
		HTTPHeader:   http.Header{"Authorization": {"Bearer " + snap.Token}},
		Subprotocols: []string{wire.Subprotocol},
		OnPingReceived: func(context.Context, []byte) bool {
			sc.heard.Store(time.Now().UnixNano())
			return true
		},
	})
	if err != nil {
		st.c.invalidate(snap)
		return false, fmt.Errorf("dial %s: %w", snap.BaseURL, err)
	}
	ws.SetReadLimit(-1) // the daemon is trusted; its frames may be large
	sc.ws = ws
	defer ws.CloseNow()

	helloDone := make(chan error, 1)
	if err := sc.hello(helloDone); err != nil {
		st.c.invalidate(snap)
		return false, err
	}
	lost := make(chan error, 1)
	go func() { lost <- sc.readLoop() }()

	select {
	case err := <-helloDone:
		if err != nil {
			return false, err
		}
	case err := <-lost:
		st.detach(sc)
		st.c.invalidate(snap)
		return false, err
	case <-st.ctx.Done():
		ws.CloseNow()
		<-lost
		return false, st.ctx.Err()
	}
	if st.opts.OnTurn != nil {
		sc.command(wire.Command{Op: wire.OpServe}, nil)
	}
	st.setState(State{Phase: Connected, Snap: snap})
	st.mu.Lock()
	var resend []*pendingSend
	for _, p := range st.sends {
		resend = append(resend, p)
	}
	st.mu.Unlock()
	for _, p := range resend {
		sc.sendInput(p)
	}

	// Serve until lost; a silent daemon (no ping for two heartbeats) is
	// treated as gone.
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
			return true, err
		case <-tick.C:
			if time.Since(time.Unix(0, sc.heard.Load())) > 2*hb {
				ws.CloseNow()
			}
		case <-st.ctx.Done():
			ws.Close(websocket.StatusNormalClosure, "client closing")
			<-lost
			st.detach(sc)
			return true, st.ctx.Err()
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

	writeMu sync.Mutex // orders writes: hello first

	mu      sync.Mutex
	nextID  int64
	pending map[int64]func(wire.Frame)

	heard       atomic.Int64 // unix nanos of the last frame or ping
	heartbeatMS atomic.Int64
}

// hello attaches every subscription. It holds writeMu from before the
// connection becomes the stream's current one until hello is written, so
// no command can precede it.
func (sc *streamConn) hello(done chan<- error) error {
	sc.writeMu.Lock()
	defer sc.writeMu.Unlock()
	st := sc.st
	st.mu.Lock()
	subs := make([]*Subscription, 0, len(st.subs))
	bodies := make([]wire.Sub, 0, len(st.subs))
	for _, s := range st.subs {
		subs = append(subs, s)
		bodies = append(bodies, s.sub())
	}
	st.conn = sc
	st.mu.Unlock()

	id := sc.register(func(f wire.Frame) {
		if !f.OK {
			done <- fmt.Errorf("hello refused: %w", f.Error)
			return
		}
		sc.heartbeatMS.Store(f.HeartbeatMS)
		for i, r := range f.Subs {
			if i < len(subs) {
				subs[i].replied(r)
			}
		}
		done <- nil
	})
	b, _ := json.Marshal(wire.Command{ID: id, Op: wire.OpHello, Client: sc.st.c.opts.Name, Subs: bodies})
	return sc.write(b)
}

func (sc *streamConn) register(fn func(wire.Frame)) int64 {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.nextID++
	sc.pending[sc.nextID] = fn
	return sc.nextID
}

func (sc *streamConn) write(b []byte) error {
	ctx, cancel := context.WithTimeout(sc.st.ctx, 10*time.Second)
	defer cancel()
	return sc.ws.Write(ctx, websocket.MessageText, b)
}

// command sends cmd with a fresh id; onReply (may be nil) gets the reply.
func (sc *streamConn) command(cmd wire.Command, onReply func(wire.Frame)) {
	if onReply == nil {
		onReply = func(wire.Frame) {}
	}
	cmd.ID = sc.register(onReply)
	b, _ := json.Marshal(cmd)
	sc.writeMu.Lock()
	err := sc.write(b)
	sc.writeMu.Unlock()
	if err != nil {
		sc.ws.CloseNow() // the read loop notices and the stream reconnects
	}
}

// subscribe sends a sub for s on this connection.
func (sc *streamConn) subscribe(s *Subscription) {
	b := s.sub()
	sc.command(wire.Command{Op: wire.OpSub, Session: b.Session, After: b.After, Epoch: b.Epoch, Window: b.Window},
		func(f wire.Frame) {
			r := wire.SubReply{Session: f.Session, OK: f.OK, Error: f.Error, Epoch: f.Epoch, Head: f.Head, Recovered: f.Recovered}
			if r.Session == "" {
				r.Session = s.session
			}
			s.replied(r)
		})
}

// sendInput sends a pending input; a retryable refusal leaves it pending
// for the next connection.
func (sc *streamConn) sendInput(p *pendingSend) {
	sc.command(wire.Command{Op: p.op, Session: p.session, InputID: p.inputID, Text: p.text}, func(f wire.Frame) {
		if !f.OK && f.Error != nil && f.Error.Retryable {
			return
		}
		sc.st.mu.Lock()
		if sc.st.sends[p.inputID] == p {
			delete(sc.st.sends, p.inputID)
		}
		sc.st.mu.Unlock()
		if !f.OK {
			p.resolve(wire.Receipt{}, f.Error)
			return
		}
		if f.Receipt == nil {
			p.resolve(wire.Receipt{}, errors.New("send: reply without a receipt"))
			return
		}
		p.resolve(*f.Receipt, nil)
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
			var f wire.Frame
			if err := json.Unmarshal(line, &f); err != nil {
				return fmt.Errorf("daemon sent a bad frame: %w", err)
			}
			sc.dispatch(f, line)
		}
	}
}

func (sc *streamConn) dispatch(f wire.Frame, raw []byte) {
	if f.IsReply() {
		sc.mu.Lock()
		fn := sc.pending[f.ID]
		delete(sc.pending, f.ID)
		sc.mu.Unlock()
		if fn != nil {
			fn(f)
		}
		return
	}
	switch f.Op {
	case wire.PushBye:
		return // the close follows and we reconnect
	case wire.PushTurn:
		if sc.st.opts.OnTurn != nil {
			sc.st.opts.OnTurn(f)
		}
		return
	}
	sc.st.mu.Lock()
	s := sc.st.subs[f.Session]
	sc.st.mu.Unlock()
	if s == nil {
		return
	}
	item := Item{Frame: f, Raw: append([]byte(nil), raw...)}
	if !s.push(item) {
		// A gap can only mean this client lost track: ask again from the
		// cursor it has.
		sc.subscribe(s)
		return
	}
	if f.Op == wire.PushReset && f.Reason == wire.ResetDeleted {
		sc.st.mu.Lock()
		if sc.st.subs[s.session] == s {
			delete(sc.st.subs, s.session)
		}
		sc.st.mu.Unlock()
		s.end(wire.Errorf(wire.CodeNotFound, "session %q was deleted", s.session))
	}
}
