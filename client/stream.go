package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"albedo/wire"
)

// StreamOptions tune a Stream.
type StreamOptions struct {
	// Budget is how long the stream keeps trying to reach a daemon, counted
	// from the moment it lost the last one (or from the start); then it ends
	// with ErrUnavailable. 0 means forever. A daemon stopped on purpose, or
	// one that cannot start, is not tried: the stream waits (Stopped,
	// StartFailed) until a daemon starts or config.toml changes, and that
	// wait does not count.
	Budget time.Duration
	// Backoff shapes reconnect delays (first ≤ 250 ms, cap 5 s).
	Backoff BackoffOptions
	// OnState, if set, is called with each new connection state, from the
	// stream's own goroutine; it must return quickly.
	OnState func(State)
	// OnTurn, if set, makes the stream serve turns (a bot token): after
	// every (re)connection it sends serve, and each turn handed to it
	// arrives here (Session, TurnID, InputID, Messages). It is called from
	// the stream's reader and must return quickly; answer with Reply.
	OnTurn func(wire.TurnPush)
	// Tools are the tools the stream serves (a bot token), with OnTool:
	// each call of one arrives there, from the stream's reader; it must
	// return quickly; answer with ToolResult. Without OnTurn, the stream
	// serves tools only.
	Tools  []wire.ToolSpec
	OnTool func(wire.ToolPush)
	// OnSessions, if set, asks the daemon (in every hello) to say when a
	// session is made or deleted, on any node, and is called each time it
	// does, from the stream's reader: list the sessions again. Only owner
	// tokens are told; the hello of others goes on without it.
	OnSessions func()
	// OnFeed, if set, follows the sessions feed (owners and members):
	// after every (re)connection the stream asks for it, resuming from
	// the last position it was given, and hands each reply and push here,
	// from the stream's reader; it must return quickly. Read pushes come
	// here too (and to the session's subscription, if any).
	OnFeed func(FeedUpdate)
	// FeedPage is the size of the feed's first page (0: the daemon's
	// default).
	FeedPage int
}

// ErrStreamClosed is returned by a Subscription or Stream used after Close.
var ErrStreamClosed = errors.New("stream closed")

// Stream is one websocket to the daemon carrying any number of session
// subscriptions, kept alive across daemon restarts: on any loss it
// reconnects with jittered backoff, re-reads daemon.json (in cluster mode:
// dials the same URL, which may reach another node), and reattaches every
// subscription from its own cursor in one hello. Its methods may be
// called from any goroutine.
type Stream struct {
	// static after construction
	c      *Client
	opts   StreamOptions
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	// sendMu orders the sending of inputs: a connection's resend of the
	// pending ones, in their order, before any sent after them.
	sendMu sync.Mutex

	mu      sync.Mutex
	subs    map[string]*Subscription
	sends   map[string]*pendingSend // by input_id: sent, no receipt yet
	seq     uint64                  // the last pendingSend.seq given
	conn    *streamConn             // the live connection, nil while down
	feedPos string                  // the sessions feed's newest position
	state   State
	err     error     // terminal
	marks   homeMarks // the home's files as the last attempt to connect began
}

// pendingSend is an input sent and not yet receipted. After a
// reconnection the pending inputs are sent again in the order they were
// first sent (seq), before any input sent after them.
type pendingSend struct {
	seq                    uint64      // the order it was handed to the stream in
	sentOn                 *streamConn // the connection it was last sent on (guarded by Stream.mu)
	op                     wire.Op     // send or post
	session, inputID, text string
	atts                   []wire.Attachment // the files the message carries
	done                   chan struct{}
	once                   sync.Once
	receipt                wire.Receipt
	err                    error
	unavailable            *Backoff // its resends after the store's faults (resendLater; guarded by Stream.mu)
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

// Err returns the stream's terminal error: one matching ErrUnavailable once
// the budget is spent, ErrStreamClosed after Close, else nil.
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

// Pending returns how many inputs were sent and have no receipt yet: a
// user interface may show them as waiting.
func (st *Stream) Pending() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.sends)
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
// commits the reply, a non-empty errText fails the turn. atts are files
// the reply carries (uploaded first: PutBlob), at most wire.MaxAttachments
// over its pieces. It needs the
// connection the turn came on; after a loss the daemon hands the turn out
// again (OnTurn is called anew) and Reply returns an error. A reply the
// daemon's store refused for now (unavailable: nothing was written) is
// sent again after a backoff, up to eight times.
func (st *Stream) Reply(ctx context.Context, turnID, text string, done bool, errText string, atts ...wire.Attachment) error {
	st.mu.Lock()
	conn := st.conn
	st.mu.Unlock()
	if conn == nil {
		return fmt.Errorf("reply to %s: not connected", turnID)
	}
	b := NewBackoff(st.opts.Backoff)
	for {
		res := make(chan wire.Reply, 1)
		conn.command(wire.Command{Op: wire.OpReply, TurnID: turnID, Text: text, Done: done, Error: errText, Attachments: atts}, func(r wire.Reply) { res <- r })
		var r wire.Reply
		select {
		case r = <-res:
		case <-ctx.Done():
			return ctx.Err()
		}
		switch {
		case r.OK:
			return nil
		case r.Error != nil && r.Error.Code == wire.CodeUnavailable && b.Attempt() < 8:
			t := time.NewTimer(b.Next())
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
		default:
			return r.Error
		}
	}
}

func (st *Stream) submit(ctx context.Context, op wire.Op, session, inputID, text string) (wire.Receipt, error) {
	in := st.queue(op, session, inputID, text, nil)
	st.flush()
	return in.Receipt(ctx)
}

// Input is an input handed to a stream by Queue.
type Input struct {
	st *Stream
	p  *pendingSend
}

// Queue hands an input to the stream and returns at once, without waiting
// for the network: the stream sends its inputs (Queue's and Send's) in the
// order they were handed to it, and sends them again in that order after a
// reconnection. Call it from the goroutine that decides the order (a user
// interface's loop); wait for the receipt with Input.Receipt. atts are
// the files the message carries, uploaded first (PutFile).
func (st *Stream) Queue(session, inputID, text string, atts ...wire.Attachment) *Input {
	in := st.queue(wire.OpSend, session, inputID, text, atts)
	go st.flush()
	return in
}

// Receipt waits for the input's receipt. If ctx ends first the stream
// forgets the input (it is not sent again); it may still have been
// accepted, which GET …/inputs/{input_id} settles.
func (in *Input) Receipt(ctx context.Context) (wire.Receipt, error) {
	p, st := in.p, in.st
	select {
	case <-p.done:
		return p.receipt, p.err
	case <-ctx.Done():
		st.mu.Lock()
		if st.sends[p.inputID] == p {
			delete(st.sends, p.inputID)
		}
		st.mu.Unlock()
		return wire.Receipt{}, ctx.Err()
	}
}

// queue registers an input, next in the stream's order.
func (st *Stream) queue(op wire.Op, session, inputID, text string, atts []wire.Attachment) *Input {
	p := &pendingSend{op: op, session: session, inputID: inputID, text: text, atts: atts, done: make(chan struct{})}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.err != nil {
		p.resolve(wire.Receipt{}, st.err)
		return &Input{st: st, p: p}
	}
	st.seq++
	p.seq = st.seq
	st.sends[inputID] = p
	return &Input{st: st, p: p}
}

// flush sends, on the current connection once it is ready, every input
// not yet sent on it, in the order they were queued. Whichever goroutine
// gets sendMu first sends them all, so goroutines racing to flush cannot
// reorder inputs.
func (st *Stream) flush() {
	st.sendMu.Lock()
	defer st.sendMu.Unlock()
	st.mu.Lock()
	conn := st.conn
	if conn == nil || !conn.ready {
		st.mu.Unlock()
		return // attached sends them, in order, once the connection is ready
	}
	var todo []*pendingSend
	for _, p := range st.sends {
		if p.sentOn != conn {
			p.sentOn = conn
			todo = append(todo, p)
		}
	}
	st.mu.Unlock()
	slices.SortFunc(todo, func(a, b *pendingSend) int { return cmp.Compare(a.seq, b.seq) })
	for _, p := range todo {
		conn.sendInput(p)
	}
}

// resendLater sends p again after a backoff, on the connection then
// current, if it is still pending and was last sent on conn: the daemon's
// store refused it for now (unavailable), and nothing was written.
func (st *Stream) resendLater(p *pendingSend, conn *streamConn) {
	st.mu.Lock()
	if p.unavailable == nil {
		p.unavailable = NewBackoff(st.opts.Backoff)
	}
	d := p.unavailable.Next()
	st.mu.Unlock()
	time.AfterFunc(d, func() {
		st.mu.Lock()
		again := st.sends[p.inputID] == p && p.sentOn == conn
		if again {
			p.sentOn = nil
		}
		st.mu.Unlock()
		if again && st.ctx.Err() == nil {
			st.flush()
		}
	})
}

// run keeps a connection up until Close or the budget is spent. Its first
// attempt may start a daemon whatever daemon.down says (a stream opened is
// a user's launch, as a command is); later ones recover a crash only.
func (st *Stream) run() {
	defer close(st.done)
	defer st.finish(ErrStreamClosed)
	b := NewBackoff(st.opts.Backoff)
	lostAt := time.Now()
	st.setState(State{Phase: Connecting})
	for first := true; ; first = false {
		marks := st.c.homeMarks()
		st.mu.Lock()
		st.marks = marks
		st.mu.Unlock()
		connected, err := st.connectOnce(first)
		if st.ctx.Err() != nil {
			return
		}
		if connected {
			lostAt = time.Now()
			b.Reset()
		}
		if s, down := st.downState(err); down {
			// Trying again changes nothing until someone acts: wait for
			// the home to change, without spending the budget.
			st.setState(s)
			if !st.waitHome(marks) {
				return
			}
			lostAt = time.Now()
			b.Reset()
			continue
		}
		if st.refusedForGood(err) {
			// The state first, as below.
			ue := &wire.Error{Code: wire.CodeUnauthorized, Message: "the daemon refused this token: it is wrong, or was revoked"}
			if strings.Contains(err.Error(), "expired") { // the close's reason, or a 401's words
				ue.Message = "this link has expired: ask for a new one"
			}
			st.setState(State{Phase: Unavailable, Err: ue})
			st.finish(ue)
			return
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

// Subscribe adds a session to the stream from cur. Many subscriptions share
// the one websocket; a second Subscribe of the same session replaces the
// first, which ends with ErrStreamClosed.
func (st *Stream) Subscribe(session string, cur Cursor) *Subscription {
	return st.subscribe(session, cur, false)
}

// SubscribeBackground is Subscribe for a session the user is not looking
// at: its pushes come all the same, but this connection is not counted
// among its viewers until Watch(true).
func (st *Stream) SubscribeBackground(session string, cur Cursor) *Subscription {
	return st.subscribe(session, cur, true)
}

func (st *Stream) subscribe(session string, cur Cursor, background bool) *Subscription {
	s := &Subscription{stream: st, session: session, cur: cur, background: background, notify: make(chan struct{}, 1)}
	st.mu.Lock()
	if st.err != nil {
		st.mu.Unlock()
		s.end(st.err)
		return s
	}
	old := st.subs[session]
	st.subs[session] = s
	conn := st.conn
	st.mu.Unlock()
	if old != nil {
		old.end(ErrStreamClosed)
	}
	if conn != nil {
		conn.subscribe(s)
	}
	return s
}

// watch tells the daemon, when connected, that s is watched or not; a
// later connection says it in its hello.
func (st *Stream) watch(s *Subscription, on bool) {
	st.mu.Lock()
	mine := st.subs[s.session] == s
	conn := st.conn
	st.mu.Unlock()
	if mine && conn != nil {
		conn.command(wire.Command{Op: wire.OpWatch, Session: s.session, Watch: &on}, nil)
	}
}

// typed sends a typing command for s, when connected.
func (st *Stream) typed(s *Subscription) {
	st.mu.Lock()
	mine := st.subs[s.session] == s
	conn := st.conn
	st.mu.Unlock()
	if mine && conn != nil {
		conn.command(wire.Command{Op: wire.OpTyping, Session: s.session}, nil)
	}
}

func (st *Stream) unsubscribe(s *Subscription) {
	st.mu.Lock()
	mine := st.subs[s.session] == s
	if mine {
		delete(st.subs, s.session)
	}
	conn := st.conn
	st.mu.Unlock()
	s.end(ErrStreamClosed)
	if mine && conn != nil {
		conn.command(wire.Command{Op: wire.OpUnsub, Session: s.session}, nil)
	}
}

func (e *unavailableError) Error() string {
	return fmt.Sprintf("%v: gave up after %s: %v", ErrUnavailable, e.budget, e.last)
}

type unavailableError struct {
	budget time.Duration
	last   error
}

func (e *unavailableError) Unwrap() error { return ErrUnavailable }

// refusedError is a connection the daemon refused for its token: a 401
// before the upgrade, or a close with 4401 (a token revoked while in use).
type refusedError struct {
	token string // the token refused
	err   error
}

func (e *refusedError) Error() string { return "token refused: " + e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

// refusedForGood says whether err ends the stream: the daemon refused a
// token that will not change. A bot's or a viewer's token (Options.Token)
// is the same at every attempt. The owner's comes from daemon.json, which
// a restarting daemon rewrites: a refusal ends the stream only if
// daemon.json still names the token refused, so that a stream that raced
// a restart carries on with the new daemon's token.
func (st *Stream) refusedForGood(err error) bool {
	var re *refusedError
	if !errors.As(err, &re) {
		return false
	}
	if st.c.opts.Token != "" { // always, in cluster mode
		return true
	}
	info, rerr := ReadDaemonFile(st.c.opts.Home)
	return rerr == nil && info.Token == re.token
}
