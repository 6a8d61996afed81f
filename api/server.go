package api

import (
	"context"
	"github.com/coder/websocket"
	"log/slog"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"albedo/hub"
	"albedo/wire"
)

// Options configure a Server. Zero durations and sizes take the defaults of
// docs/protocol.md.
type Options struct {
	Token        string        // the owner token of daemon.json
	Boot         string        // this daemon start's random id, reported in hello
	Heartbeat    time.Duration // websocket ping interval (15 s)
	WriteTimeout time.Duration // a write that cannot complete this long closes the connection, logged as "slow" (30 s)
	HelloTimeout time.Duration // hello must arrive within this (10 s)
	MaxFrame     int64         // bytes per websocket message (1 MiB)
	MaxBatch     int           // bytes of frames in one message (64 KiB); a larger frame goes alone
	IdleTimeout  time.Duration // an authenticated keep-alive connection idle this long is closed (60 s)
	MaxFresh     int           // connections that have not sent a request yet (256; gate.go)
	MaxPreHello  int           // websockets waiting for a token in hello (256; gate.go)
	// Public says the daemon listens beyond loopback. Off, only requests
	// whose Host is a loopback name or address are served: a daemon on
	// loopback is not reachable through a name a web page controls (DNS
	// rebinding). On, a Host may also be any IP address or one of Hosts.
	Public bool
	// Hosts are the names a Public daemon answers to: its certificate's
	// DNS names and the operator's --host; "*.example.com" matches one
	// label. Every other name is refused with 403, as on loopback.
	Hosts []string
	// ReadyChecks are asked by GET /readyz after the store's own (ready.go):
	// a cluster's NATS connection, say.
	ReadyChecks []ReadyCheck
	// OnShutdown is called (on its own goroutine) by POST /v1/daemon/shutdown.
	OnShutdown func()
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
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 60 * time.Second
	}
	if o.MaxFresh <= 0 {
		o.MaxFresh = 256
	}
	if o.MaxPreHello <= 0 {
		o.MaxPreHello = 256
	}
}

// Server serves the HTTP API and the websocket. Its methods may be called
// from any goroutine.
type Server struct {
	// static after construction
	hub  *hub.Hub
	opts Options
	log  *slog.Logger
	e    *echo.Echo

	bufs    sync.Pool  // *[]byte buffers, held only while writing a batch or running a read message
	writers writerPool // runs the connections' writers (ws_pool.go)
	fresh   freshConns // connections that have not sent a request yet

	mu       sync.Mutex
	conns    map[*wsConn]struct{}
	closing  bool
	preHello int            // websockets waiting for the token of their hello
	unready  string         // why the last /readyz was not ready ("": it was)
	wg       sync.WaitGroup // one per websocket connection

	storePing   func(context.Context) error // tests: replaces hub.Ping in /readyz
	afterAccept func()                      // tests: runs between Accept and registration
	writerIdle  func()                      // tests: runs when a connection's writer goroutine ends with nothing to write
}

// New builds the server's routes over h.
func New(h *hub.Hub, opts Options, log *slog.Logger) *Server {
	opts.defaults()
	if log == nil {
		log = slog.Default()
	}
	s := &Server{hub: h, opts: opts, log: log, conns: map[*wsConn]struct{}{}, fresh: freshConns{max: opts.MaxFresh}}
	// Tokens another node of a cluster revoked or narrowed end their
	// connections here too.
	h.OnTokensChanged(func(revoked, narrowed []string) {
		s.closeTokens(revoked, StatusBadToken, "token revoked")
		s.closeTokens(narrowed, websocket.StatusPolicyViolation, "this token's sessions changed; connect again")
	})
	s.bufs.New = func() any { b := make([]byte, 0, 4096); return &b }
	// A few workers more than processors: a writer whose cursor is behind
	// the ring reads the database (a cgo call) while the others write.
	s.writers.max = max(4, runtime.GOMAXPROCS(0))
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.errorHandler
	e.Use(s.keepAliveForTokens, s.checkHost, middleware.BodyLimit("2M"))
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/", s.page)
	e.GET("/assets/*", s.asset)

	v1 := e.Group("/v1", s.requireToken)
	v1.GET("/sessions", s.listSessions)
	v1.POST("/sessions", s.createSession)
	v1.PUT("/sessions/:id", s.putSession)
	v1.GET("/sessions/:id", s.getSession)
	v1.PATCH("/sessions/:id", s.patchSession)
	v1.DELETE("/sessions/:id", s.deleteSession)
	v1.GET("/sessions/:id/events", s.history)
	v1.PUT("/sessions/:id/inputs/:input_id", s.putInput)
	v1.GET("/sessions/:id/inputs/:input_id", s.getInput)
	v1.POST("/sessions/:id/interrupt", s.interrupt)
	v1.GET("/sessions/:id/status", s.status)
	v1.POST("/sessions/:id/shares", s.share)
	v1.DELETE("/sessions/:id/shares", s.unshare)
	v1.GET("/providers", s.listProviders)
	v1.GET("/bots", s.listBots)
	v1.POST("/bots", s.addBot)
	v1.DELETE("/bots/:name", s.removeBot)
	v1.POST("/daemon/shutdown", s.shutdown)
	v1.GET("/ws", s.websocket)
	s.e = e
	return s
}

// Handler is the server's http.Handler.
func (s *Server) Handler() http.Handler { return s.e }

// Bye tells every websocket connection that the daemon stops on purpose
// (reason "shutdown" closes with 1001, "restart" with 1012): each writes
// bye in place of whatever it had not written yet (a client fetches that
// from its cursor on the next daemon), and closes. New connections are refused from now
// on. It returns when every connection has ended or ctx is done, in which
// case the rest are cut.
func (s *Server) Bye(ctx context.Context, reason string, retryAfter time.Duration) {
	conns := s.closeDoors()
	for _, c := range conns {
		c.bye(reason, retryAfter)
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		for _, c := range conns {
			c.ws.CloseNow()
		}
		<-done
	}
}

// Close cuts every websocket connection and waits for their goroutines. It
// is safe to call twice, and after Bye.
func (s *Server) Close() {
	for _, c := range s.closeDoors() {
		c.ws.CloseNow()
	}
	s.wg.Wait()
}

// closeDoors refuses new websocket connections and returns the open ones.
func (s *Server) closeDoors() []*wsConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	return slices.Collect(maps.Keys(s.conns))
}

func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]any{"ok": true, "boot": s.opts.Boot, "version": wire.Version})
}

func (s *Server) shutdown(c echo.Context) error {
	if s.opts.OnShutdown != nil {
		go s.opts.OnShutdown()
	}
	return c.JSON(http.StatusAccepted, map[string]bool{"stopping": true})
}
