package ws

import (
	"context"
	"encoding/base64"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"albedo/hub"
	"albedo/hub/access"
	"albedo/wire"
)

// StatusBadToken closes a connection whose token is unknown or revoked
// (docs/protocol.md, "Close codes").
const StatusBadToken websocket.StatusCode = wire.CloseBadToken

// Options configure a Server. Zero durations and sizes take the defaults of
// docs/protocol.md.
type Options struct {
	Boot         string        // this daemon start's random id, reported in hello
	Heartbeat    time.Duration // ping interval (15 s)
	WriteTimeout time.Duration // a write that cannot complete this long closes the connection, logged as "slow" (30 s)
	HelloTimeout time.Duration // hello must arrive within this (10 s)
	MaxFrame     int64         // bytes per message (1 MiB)
	MaxBatch     int           // bytes of frames in one message (64 KiB); a larger frame goes alone
	MaxPreHello  int           // connections waiting for a token in hello (256)
	// MaxPerToken bounds one token's websockets, and MaxOthers those of
	// links, guests and bots together (shares.go); 0: no bound.
	MaxPerToken, MaxOthers int
	// Authenticate resolves the token a hello carries, for a connection
	// whose upgrade carried none.
	Authenticate func(token string) (access.Principal, bool)
	// ProofKey, when set, answers prove before hello (prove.go): the key
	// the page's link carries.
	ProofKey []byte
	// SessionToken, when set, makes the bearer a hello's reply hands out
	// for HTTP calls made for the connection.
	SessionToken func(access.Principal) string
	// OnError, when set, is told the code of every error reply (the
	// metric albedo_errors_total). It must return at once.
	OnError func(wire.Code)
}

func (o *Options) defaults() {
	if o.Heartbeat <= 0 {
		o.Heartbeat = wire.HeartbeatMS * time.Millisecond
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 30 * time.Second
	}
	if o.HelloTimeout <= 0 {
		o.HelloTimeout = 10 * time.Second
	}
	if o.MaxFrame <= 0 {
		o.MaxFrame = wire.MaxFrameBytes
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 64 << 10
	}
	if o.MaxPreHello <= 0 {
		o.MaxPreHello = 256
	}
	if o.Authenticate == nil {
		o.Authenticate = func(string) (access.Principal, bool) { return access.Principal{}, false }
	}
}

// Server is the websocket endpoint: it upgrades requests (Serve) and runs
// their connections until they end or it closes. Its methods may be called
// from any goroutine.
type Server struct {
	// static after construction
	hub  *hub.Hub
	opts Options
	log  *slog.Logger

	bufs    sync.Pool  // *[]byte buffers, held only while writing a batch or running a read message
	writers writerPool // runs the connections' writers (pool.go)

	heartbeatCuts atomic.Int64 // connections cut for a ping with no pong (writer.beat)
	slowCuts      atomic.Int64 // connections closed for a write past WriteTimeout

	mu       sync.Mutex
	conns    map[*conn]struct{}
	closing  bool
	preHello int            // connections waiting for the token of their hello
	perToken map[string]int // websockets counted against each token's share (shares.go)
	others   int            // websockets of links, guests and bots
	wg       sync.WaitGroup // one per connection

	afterAccept  func() // tests: runs between Accept and registration
	beforeRead   func() // tests: runs before each message a connection reads after hello
	beforeHandle func() // tests: runs before the commands of each message, handling
	writerIdle   func() // tests: runs when a connection's writer goroutine ends with nothing to write
}

// New makes the endpoint over h.
func New(h *hub.Hub, opts Options, log *slog.Logger) *Server {
	opts.defaults()
	if log == nil {
		log = slog.Default()
	}
	s := &Server{hub: h, opts: opts, log: log, conns: map[*conn]struct{}{}}
	s.bufs.New = func() any { b := make([]byte, 0, 4096); return &b }
	// A few workers more than processors: a writer whose cursor is behind
	// the ring reads the database (a cgo call) while the others write.
	s.writers.max = max(4, runtime.GOMAXPROCS(0))
	s.writers.run = (*writer).run
	return s
}

// Serve upgrades r to a websocket and serves it on a goroutine of its own;
// it returns once the upgrade is answered. p is the principal of the
// request's Authorization header, if authed; without one, the token comes
// in hello. The error, a *wire.Error, says why the upgrade was refused
// before it began (too many connections waiting for hello, the server
// closing): the caller answers it over HTTP.
//
// A connection counts in s.wg from before the upgrade, so that Bye and
// Close wait for one caught in the middle of it.
func (s *Server) Serve(w http.ResponseWriter, r *http.Request, p access.Principal, authed bool) error {
	early, werr := headerHello(r.Header)
	if werr != nil {
		return werr
	}
	if !authed && !s.enterPreHello() {
		return wire.Errorf(wire.CodeTooMany, "too many connections are waiting to say hello; try again")
	}
	if !s.enter() {
		if !authed {
			s.leavePreHello()
		}
		return &wire.Error{Code: wire.CodeDaemonStopping, Message: "the daemon is stopping"}
	}
	served := false
	defer func() {
		if !served {
			s.wg.Done()
			if !authed {
				s.leavePreHello()
			}
		}
	}()
	lh := &leanHijacker{ResponseWriter: w, s: s, hold: early != nil}
	if early != nil {
		w.Header().Set(wire.HelloHeader, wire.HelloTaken)
	}
	ws, err := websocket.Accept(lh, r, &websocket.AcceptOptions{
		Subprotocols:    []string{wire.Subprotocol},
		CompressionMode: websocket.CompressionDisabled,
		OnPongReceived:  lh.pongReceived,
	})
	if err != nil {
		return nil // Accept has written the HTTP error
	}
	ws.SetReadLimit(s.opts.MaxFrame)
	if ws.Subprotocol() != wire.Subprotocol {
		ws.Close(websocket.StatusPolicyViolation, "subprotocol "+wire.Subprotocol+" required")
		return nil
	}
	wc := &conn{s: s, ws: ws, lean: lh.lc, p: p, preHello: !authed, early: early, closeReq: make(chan closeReq, 1)}
	if s.afterAccept != nil {
		s.afterAccept()
	}
	if !s.register(wc) {
		// Bye (or Close) began during the upgrade and did not see this
		// connection: it must not outlive them. Registering it anyway
		// would leave Bye waiting for ever.
		ws.Close(websocket.StatusGoingAway, "the daemon is stopping")
		return nil
	}
	// The connection is hijacked: net/http is done with it once this
	// handler returns, and lets go of what it still held for the request
	// (its buffers, the request, echo's context, a deep stack) — a third of
	// an idle connection's memory. So it is served on a goroutine of its
	// own, which owns the s.wg count from here.
	served = true
	go wc.serve()
	return nil
}

// headerHello is the hello the upgrade's request carries in
// wire.HelloHeader, if any; a header that is not one hello, base64url of
// at most wire.MaxHelloHeader bytes, is refused before the upgrade.
func headerHello(h http.Header) (*wire.Command, *wire.Error) {
	vs := h.Values(wire.HelloHeader)
	switch {
	case len(vs) == 0:
		return nil, nil
	case len(vs) > 1:
		return nil, wire.Errorf(wire.CodeBadRequest, "%s is given %d times; it carries one hello", wire.HelloHeader, len(vs))
	case len(vs[0]) > wire.MaxHelloHeader:
		return nil, wire.Errorf(wire.CodeBadRequest, "%s is %d bytes; the limit is %d: say hello in the first frame instead",
			wire.HelloHeader, len(vs[0]), wire.MaxHelloHeader)
	}
	b, err := base64.RawURLEncoding.DecodeString(vs[0])
	if err != nil {
		return nil, wire.Errorf(wire.CodeBadRequest, "%s is not base64url without padding: %v", wire.HelloHeader, err)
	}
	cmd, werr := decodeCommand(b)
	if werr != nil {
		return nil, werr
	}
	if cmd.Op != wire.OpHello {
		return nil, wire.Errorf(wire.CodeBadRequest, "%s carries op %q; it carries only hello", wire.HelloHeader, cmd.Op)
	}
	return &cmd, nil
}

// enter counts a new connection in s.wg, unless the server is closing.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.wg.Add(1)
	return true
}

// register adds wc to the connections Bye and Close reach, unless they
// have begun.
func (s *Server) register(wc *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.conns[wc] = struct{}{}
	return true
}

func (s *Server) unregister(wc *conn) {
	s.mu.Lock()
	delete(s.conns, wc)
	s.mu.Unlock()
}

// enterPreHello counts a connection that will carry its token in hello,
// unless MaxPreHello of them are already waiting for theirs.
func (s *Server) enterPreHello() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.preHello >= s.opts.MaxPreHello {
		return false
	}
	s.preHello++
	return true
}

func (s *Server) leavePreHello() {
	s.mu.Lock()
	s.preHello--
	s.mu.Unlock()
}

// Bye tells every connection that the daemon stops on purpose (reason
// "shutdown" closes with 1001, "restart" with 1012): each writes bye in
// place of whatever it had not written yet (a client fetches that from its
// cursor on the next daemon), and closes. New connections are refused from
// now on. It returns when every connection has ended or ctx is done, in
// which case the rest are cut.
func (s *Server) Bye(ctx context.Context, reason string, retryAfter time.Duration) {
	conns := s.closeDoors()
	for _, c := range conns {
		c.bye(reason, retryAfter)
	}
	if !s.allEnded(ctx) {
		for _, c := range conns {
			c.ws.CloseNow()
		}
		s.wg.Wait()
	}
}

// allEnded waits until every connection has ended (true), or ctx ends
// first (false).
func (s *Server) allEnded(ctx context.Context) bool {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// Drain refuses new websockets (503, as a stop does) and asks every open
// connection to reconnect elsewhere: each gets bye (drain) and 1012 at a
// random moment within window, so that the nodes its clients come back
// to are not stampeded. It returns once every connection has closed, or
// when ctx ends.
func (s *Server) Drain(ctx context.Context, window time.Duration) {
	conns := s.closeDoors()
	timers := make([]*time.Timer, 0, len(conns))
	for _, c := range conns {
		at := time.Duration(0)
		if window > 0 {
			at = rand.N(window)
		}
		timers = append(timers, time.AfterFunc(at, func() { c.bye(wire.ByeDrain, 0) }))
	}
	defer func() {
		for _, t := range timers {
			t.Stop()
		}
	}()
	s.allEnded(ctx)
}

// Close cuts every connection and waits for their goroutines. It is safe
// to call twice, and after Bye.
func (s *Server) Close() {
	for _, c := range s.closeDoors() {
		c.ws.CloseNow()
	}
	s.wg.Wait()
}

// Closing says whether Bye or Close has begun.
func (s *Server) Closing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// closeDoors refuses new connections and returns the open ones.
func (s *Server) closeDoors() []*conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	return slices.Collect(maps.Keys(s.conns))
}

// CloseTokens closes every connection of the tokens ids with code:
// StatusBadToken for a token revoked, another code for one whose scope
// changed (its client connects again).
func (s *Server) CloseTokens(ids []string, code websocket.StatusCode, reason string) {
	s.closeWhere(func(p access.Principal) bool { return p.TokenID != "" && slices.Contains(ids, p.TokenID) }, code, reason)
}

// CloseMember closes the connections that act as a member, whatever their
// token: the daemon.json token's too.
func (s *Server) CloseMember(id string, code websocket.StatusCode, reason string) {
	s.closeWhere(func(p access.Principal) bool { return id != "" && p.MemberID == id }, code, reason)
}

// closeWhere closes the connections whose principal doomed says.
func (s *Server) closeWhere(doomed func(access.Principal) bool, code websocket.StatusCode, reason string) {
	s.mu.Lock()
	var cs []*conn
	for c := range s.conns {
		if doomed(c.principal()) {
			cs = append(cs, c)
		}
	}
	s.mu.Unlock()
	for _, c := range cs {
		go c.ws.Close(code, reason)
	}
}

// Cuts returns how many connections the daemon has ended for their peer:
// heartbeat, a ping with no pong within the interval; slow, a write that
// could not complete within WriteTimeout.
func (s *Server) Cuts() (heartbeat, slow int64) {
	return s.heartbeatCuts.Load(), s.slowCuts.Load()
}

// ConnsByRole counts the open connections by their token's role; every
// role is present, with 0 if none.
func (s *Server) ConnsByRole() map[wire.TokenRole]int {
	s.mu.Lock()
	conns := slices.Collect(maps.Keys(s.conns))
	s.mu.Unlock()
	byRole := map[wire.TokenRole]int{wire.TokenOwner: 0, wire.TokenMember: 0, wire.TokenBot: 0, wire.TokenViewer: 0, wire.TokenGuest: 0}
	for _, wc := range conns {
		byRole[wc.principal().Role]++
	}
	return byRole
}
