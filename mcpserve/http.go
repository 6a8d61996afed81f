package mcpserve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"albedo/client"
)

// HTTP is albedo as an MCP server over streamable HTTP (the daemon's
// /v1/mcp, docs/mcp.md): the tools, acting with each request's bearer
// token. They act through the daemon's API itself, as `albedo mcp` does
// through a home's daemon: a client on in-memory connections to the
// API's handler, with that token, so that every check the API makes
// applies to what an agent does, websockets included, and no socket is
// opened.
//
// Stateless: every request is its own MCP session, made for its token,
// so that no session can be used with another token than the one that
// made it; the tools need no server-to-client requests.
type HTTP struct {
	version string
	h       http.Handler

	mu   sync.Mutex
	ln   *memListener
	srv  *http.Server
	hc   *http.Client
	done bool
}

// NewHTTP makes the handler; Serve gives it the API to act through.
func NewHTTP(version string) *HTTP {
	x := &HTTP{version: version}
	x.h = mcp.NewStreamableHTTPHandler(x.server, &mcp.StreamableHTTPOptions{
		Stateless: true,
		// The daemon refuses, before this, a Host a page could reach by
		// DNS rebinding.
		DisableLocalhostProtection: true,
	})
	return x
}

// Serve makes api the handler the tools' clients reach.
func (x *HTTP) Serve(api http.Handler) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done || x.srv != nil {
		return
	}
	x.ln = newMemListener()
	x.srv = &http.Server{Handler: api}
	go x.srv.Serve(x.ln)
	x.hc = &http.Client{Transport: &http.Transport{DialContext: x.ln.dial}}
}

// Close ends the in-memory connections; no request is served after.
func (x *HTTP) Close() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.done = true
	if x.srv != nil {
		x.srv.Close()
	}
}

// ServeHTTP serves MCP; the daemon has checked the bearer token.
func (x *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) { x.h.ServeHTTP(w, r) }

// server is the MCP server of a request: the tools with its token.
func (x *HTTP) server(r *http.Request) *mcp.Server {
	x.mu.Lock()
	hc := x.hc
	x.mu.Unlock()
	if hc == nil {
		return nil // not served yet, or closed: 400
	}
	token := ""
	if h := r.Header.Get("Authorization"); len(h) > 7 && (h[:7] == "Bearer " || h[:7] == "bearer ") {
		token = h[7:]
	}
	c, err := client.New(client.Options{URL: "http://127.0.0.1", Token: token, HTTP: hc, Name: "albedo-mcp/1"})
	if err != nil {
		return nil
	}
	return New(c, x.version)
}

// memListener is a net.Listener of in-memory connections (net.Pipe).
type memListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

var errMemClosed = errors.New("the in-memory listener is closed")

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, errMemClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr{} }

// dial is a new connection to the listener.
func (l *memListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	server, c := net.Pipe()
	select {
	case l.conns <- server:
		return c, nil
	case <-l.closed:
		return nil, errMemClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type memAddr struct{}

func (memAddr) Network() string { return "memory" }
func (memAddr) String() string  { return "memory" }
