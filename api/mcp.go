package api

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"albedo/client"
	"albedo/mcpserve"
)

// /v1/mcp is albedo as an MCP server over streamable HTTP, for an agent
// on another machine (docs/mcp.md): the tools of mcpserve, acting with
// the request's bearer token. They act through the API itself, as
// `albedo mcp` does through a home's daemon: a client on an in-memory
// connection to this server, with that token, so that every check the
// API makes applies to what an agent does, and only those.
//
// Stateless: every request is its own MCP session, made for its token,
// so that no session can be used with another token than the one that
// made it; the tools need no server-to-client requests.

// loopback serves the API to the server's own clients over in-memory
// connections.
type loopback struct {
	once sync.Once
	ln   *memListener
	srv  *http.Server
	hc   *http.Client
}

// client is a client of this server with token.
func (s *Server) loopbackClient(token string) (*client.Client, error) {
	s.loop.once.Do(func() {
		s.loop.ln = newMemListener()
		s.loop.srv = &http.Server{Handler: s.e, ConnContext: withConn}
		go s.loop.srv.Serve(s.loop.ln)
		s.loop.hc = &http.Client{Transport: &http.Transport{DialContext: s.loop.ln.dial}}
	})
	if s.loop.hc == nil {
		return nil, errors.New("the server is closing")
	}
	return client.New(client.Options{URL: "http://127.0.0.1", Token: token, HTTP: s.loop.hc, Name: "albedo-mcp/1"})
}

// mcpHandler serves /v1/mcp; requireToken has checked the token.
func (s *Server) mcpHandler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		c, err := s.loopbackClient(bearer(r.Header.Get("Authorization")))
		if err != nil {
			s.log.Warn("mcp: a client of the API", "err", err)
			return nil
		}
		return mcpserve.New(c, s.opts.Build.Version)
	}, &mcp.StreamableHTTPOptions{
		Stateless: true,
		// checkHost has refused what a page could reach by DNS rebinding.
		DisableLocalhostProtection: true,
	})
}

// closeLoopback ends the in-memory connections, and makes none after.
func (s *Server) closeLoopback() {
	s.loop.once.Do(func() {}) // none made after
	if s.loop.srv != nil {
		s.loop.srv.Close()
	}
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
