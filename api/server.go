package api

import (
	"cmp"
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"albedo/api/ws"
	"albedo/hub"
	"albedo/hub/access"
	"albedo/wire"
)

// Options configure a Server. Zero durations and sizes take the defaults of
// docs/protocol.md. The websocket's (Heartbeat … MaxBatch, MaxPreHello) go
// to its endpoint, ws.Server.
type Options struct {
	Token string // the owner token of daemon.json
	// MCP serves /v1/mcp, albedo as an MCP server (mcpserve.HTTP), after
	// the token check; nil answers not_found.
	MCP http.Handler
	// Owner is who daemon.json's token acts as: the home's own member, an
	// admin (hub.EnsureMember). Unset, an owner named "user".
	Owner access.Principal
	// ProofKey is the key the page's links carry, with which the daemon
	// proves itself before a page says hello (api/ws/prove.go); none: no
	// proof.
	ProofKey     []byte
	Boot         string        // this daemon start's random id, reported in hello
	Heartbeat    time.Duration // websocket ping interval (15 s)
	WriteTimeout time.Duration // a write that cannot complete this long closes the connection, logged as "slow" (30 s)
	HelloTimeout time.Duration // hello must arrive within this (10 s)
	MaxFrame     int64         // bytes per websocket message (1 MiB)
	MaxBatch     int           // bytes of frames in one message (64 KiB); a larger frame goes alone
	IdleTimeout  time.Duration // an authenticated keep-alive connection idle this long is closed (60 s)
	MaxConns     int           // connections open at once (the file descriptor limit less a reserve; open_conns.go)
	MaxFresh     int           // connections that have not sent a request yet (256; gate.go)
	MaxPreHello  int           // websockets waiting for a token in hello (256; gate.go)
	// ConnsPerToken bounds the websockets of one token other than an
	// owner's (api/ws/shares.go): 0, an eighth of MaxConns, at least 4.
	// Links, guests and bots together hold at most MaxConns less an
	// eighth of it (at least 4): the rest is kept for owners and members.
	ConnsPerToken int
	// Public says the daemon listens beyond loopback. Off, only requests
	// whose Host is a loopback name or address, or one of Hosts, are
	// served: a daemon on loopback is not reachable through a name a web
	// page controls (DNS rebinding). On, a Host may also be any IP address.
	Public bool
	// Hosts are the names the daemon answers to besides loopback's, on
	// loopback too: its certificate's DNS names and the operator's --host;
	// "*.example.com" matches one label. Every other name is refused with
	// 403.
	Hosts []string
	// ReadyChecks are asked by GET /readyz after the store's own (ready.go):
	// a cluster's NATS connection, say.
	ReadyChecks []ReadyCheck
	// OnShutdown is called (on its own goroutine) by POST /v1/daemon/shutdown.
	OnShutdown func()
	// Build is the binary's version and commit, which /readyz reports and
	// albedo_build_info carries, so that an operator tells builds apart.
	Build Build
}

// Build names a binary: its version, and the commit it was built from
// ("" when unknown).
type Build struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
}

func (o *Options) defaults() {
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 60 * time.Second
	}
	if o.MaxFresh <= 0 {
		o.MaxFresh = 256
	}
	if o.MaxConns <= 0 {
		o.MaxConns = fdBound()
	}
	if o.ConnsPerToken <= 0 {
		o.ConnsPerToken = peopleReserve(o.MaxConns)
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

	ownerMu sync.RWMutex
	owner   access.Principal // who Options.Token acts as (ownerP)
	boot    []byte           // this boot's secret, under which session tokens are made (session.go)
	ws      *ws.Server       // the websocket endpoint, /v1/ws
	open    *openConns       // connections the listener holds open
	fresh   freshConns       // connections that have not sent a request yet

	draining atomic.Bool // Drain was called
	errs     errorCounts // error replies by code, HTTP and websocket

	mu      sync.Mutex
	unready string // why the last /readyz was not ready ("": it was)

	storePing func(context.Context) error // tests: replaces hub.Ping in /readyz

}

// New builds the server's routes over h.
func New(h *hub.Hub, opts Options, log *slog.Logger) *Server {
	opts.defaults()
	if log == nil {
		log = slog.Default()
	}
	s := &Server{hub: h, opts: opts, log: log, open: newOpenConns(opts.MaxConns), fresh: freshConns{max: opts.MaxFresh, left: make(chan struct{}, 1)}, owner: opts.Owner}
	s.boot = make([]byte, 32)
	_, _ = rand.Read(s.boot)
	if s.owner.Role == "" {
		s.owner = access.Principal{Role: wire.TokenOwner, Name: "user"}
	}
	s.ws = ws.New(h, ws.Options{
		Boot: opts.Boot, Heartbeat: opts.Heartbeat, WriteTimeout: opts.WriteTimeout,
		HelloTimeout: opts.HelloTimeout, MaxFrame: opts.MaxFrame, MaxBatch: opts.MaxBatch,
		MaxPreHello: opts.MaxPreHello, Authenticate: s.authenticate,
		MaxPerToken: opts.ConnsPerToken, MaxOthers: max(opts.MaxConns-peopleReserve(opts.MaxConns), 1),
		ProofKey: opts.ProofKey, SessionToken: s.sessionToken, OnError: s.errs.add,
	}, log)
	// Tokens another node of a cluster revoked or narrowed end their
	// connections here too.
	h.OnTokensChanged(s.closeTokens)
	h.OnLinksExpired(func(ids []string) { s.ws.CloseTokens(ids, ws.StatusBadToken, LinkExpired) })
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.errorHandler
	e.Use(s.keepAliveForTokens, s.checkHost, bodyLimit)
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/", s.page)
	e.GET("/assets/*", s.asset)
	s.routes(e.Group("/v1", s.requireToken))
	s.e = e
	return s
}

// bodyLimit bounds a request's body to 2 MiB, but a blob's, which
// max_attachment_bytes bounds and which is read a chunk at a time
// (blobs.go).
var bodyLimit = middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{
	Limit: "2M",
	Skipper: func(c echo.Context) bool {
		return c.Request().Method == http.MethodPut && strings.HasPrefix(c.Request().URL.Path, "/v1/blobs/")
	},
})

// routes are the /v1 routes, each in the permission table (auth.go).
func (s *Server) routes(v1 *echo.Group) {
	v1.GET("/sessions", s.listSessions)
	v1.POST("/sessions", s.createSession)
	v1.PUT("/sessions/:id", s.putSession)
	v1.GET("/sessions/:id", s.getSession)
	v1.PATCH("/sessions/:id", s.patchSession)
	v1.DELETE("/sessions/:id", s.deleteSession)
	v1.GET("/sessions/:id/events", s.history)
	v1.POST("/sessions/:id/import", s.importEvents)
	v1.POST("/sessions/:id/fork", s.fork)
	v1.GET("/sessions/:id/forks", s.forks)
	v1.POST("/sessions/:id/compact", s.compact)
	v1.PUT("/sessions/:id/read", s.putRead)
	v1.GET("/sessions/:id/read", s.getRead)
	v1.PUT("/sessions/:id/pin", s.pin)
	v1.DELETE("/sessions/:id/pin", s.unpin)
	v1.GET("/me/pins", s.pins)
	v1.PUT("/sessions/:id/inputs/:input_id", s.putInput)
	v1.GET("/sessions/:id/inputs/:input_id", s.getInput)
	v1.POST("/sessions/:id/interrupt", s.interrupt)
	v1.POST("/sessions/:id/continue", s.continueTurn)
	v1.GET("/sessions/:id/status", s.status)
	v1.GET("/sessions/:id/approvals", s.approvals)
	v1.POST("/sessions/:id/approvals/:call_id", s.decide)
	v1.GET("/tools", s.tools)
	v1.POST("/sessions/:id/shares", s.share)
	v1.DELETE("/sessions/:id/shares", s.unshare)
	v1.GET("/sessions/:id/shares", s.listLinks)
	v1.DELETE("/sessions/:id/shares/:label", s.unlink)
	v1.GET("/sessions/:id/grants", s.listGrants)
	v1.PUT("/sessions/:id/grants/:member", s.putGrant)
	v1.DELETE("/sessions/:id/grants/:member", s.deleteGrant)
	v1.GET("/members", s.listMembers)
	v1.POST("/members", s.addMember)
	v1.DELETE("/members/:name", s.removeMember)
	v1.PATCH("/members/:name", s.renameMember)
	v1.POST("/me/tokens", s.myToken)
	v1.GET("/search", s.search)
	v1.GET("/usage", s.usage)
	v1.GET("/providers", s.listProviders)
	v1.GET("/providers/:name/models", s.listModels)
	v1.GET("/bots", s.listBots)
	v1.POST("/bots", s.addBot)
	v1.DELETE("/bots/:name", s.removeBot)
	v1.GET("/tokens", s.listTokens)
	v1.POST("/tokens", s.addToken)
	v1.DELETE("/tokens/:name", s.removeToken)
	v1.POST("/daemon/shutdown", s.shutdown)
	v1.PUT("/blobs/:sha256", s.putBlob)
	v1.HEAD("/blobs/:sha256", s.getBlob)
	v1.GET("/blobs/:sha256", s.getBlob)
	v1.GET("/ws", s.websocket)
	mcpH := s.mcp
	v1.POST("/mcp", mcpH)
	v1.GET("/mcp", mcpH)
	v1.DELETE("/mcp", mcpH)
}

// mcp serves /v1/mcp: Options.MCP, albedo as an MCP server, behind the
// token check every route has.
func (s *Server) mcp(c echo.Context) error {
	if s.opts.MCP == nil {
		return wire.Errorf(wire.CodeNotFound, "this daemon serves no MCP")
	}
	s.opts.MCP.ServeHTTP(c.Response(), c.Request())
	return nil
}

// Handler is the server's http.Handler.
func (s *Server) Handler() http.Handler { return s.e }

// Bye tells every websocket connection that the daemon stops on purpose
// (ws.Server.Bye) and refuses new ones.
func (s *Server) Bye(ctx context.Context, reason string, retryAfter time.Duration) {
	s.ws.Bye(ctx, reason, retryAfter)
}

// Drain takes the daemon out of service for a while before it stops:
// /readyz says 503 (draining) at once, so that a balancer sends it nothing
// new; new websockets are refused; each open one is asked to reconnect
// elsewhere at a random moment within window (ws.Server.Drain). HTTP
// requests are served until the stop.
func (s *Server) Drain(ctx context.Context, window time.Duration) {
	s.draining.Store(true)
	s.ws.Drain(ctx, window)
}

// Close cuts every websocket connection and waits for their goroutines. It
// is safe to call twice, and after Bye.
func (s *Server) Close() { s.ws.Close() }

// closeTokens ends the websockets of the tokens revoked (4401) and of those
// whose sessions changed (1008: their clients connect again).
func (s *Server) closeTokens(revoked, narrowed []string) {
	s.ws.CloseTokens(revoked, ws.StatusBadToken, "token revoked")
	s.ws.CloseTokens(narrowed, websocket.StatusPolicyViolation, "this token's sessions changed; connect again")
}

// websocket serves GET /v1/ws.
func (s *Server) websocket(c echo.Context) error {
	p, authed := principalOf(c)
	return s.ws.Serve(c.Response(), c.Request(), p, authed)
}

func (s *Server) healthz(c echo.Context) error {
	// The binary's version, as albedo --version says it (the protocol's
	// when the daemon was given none).
	return c.JSON(http.StatusOK, map[string]any{"ok": true, "boot": s.opts.Boot, "version": cmp.Or(s.opts.Build.Version, wire.Version)})
}

func (s *Server) shutdown(c echo.Context) error {
	if s.opts.OnShutdown != nil {
		go s.opts.OnShutdown()
	}
	return c.JSON(http.StatusAccepted, map[string]bool{"stopping": true})
}
