package api

import (
	"crypto/tls"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"albedo/wire"
)

// What a client without a token can hold is bounded, so that the owner is
// still served when something floods the port (docs/protocol.md, "Limits"):
//
//   - a connection whose request has not come whole yet counts among at
//     most Options.MaxFresh; at that bound the daemon takes no more in
//     until one of them is served, or one can be closed, oldest first: one
//     that sent nothing for freshGrace, or that sent part of a request's
//     header and nothing more for partialGrace, with nothing unread (an
//     honest client sends its request at once, and whole). Meanwhile it
//     looks at the next connection in the kernel's listen queue
//     (gatedListener.Accept): one with a header begun and not ended is
//     closed at once, one whose header is whole is served, and the rest
//     wait there, in the order they came: a storm of honest clients
//     reconnecting at once goes through at the pace the daemon reads them,
//     a flood of idle ones at MaxFresh per freshGrace, one that sends its
//     header a byte at a time at the pace the daemon accepts
//     (fresh_conns.go). And ReadHeaderTimeout closes any whose request
//     does not come whole within 10 s of the daemon starting to read it;
//   - a response to a request that proved no token (/healthz, 401, 404)
//     closes its connection: only a token buys keep-alive, and an
//     authenticated keep-alive ends after IdleTimeout;
//   - a websocket that carries its token in hello counts among at most
//     Options.MaxPreHello until hello; past that an upgrade is refused with
//     429, and HelloTimeout closes any after 10 s (package ws keeps that
//     count).
//
// Every connection, with a token or without, also counts among at most
// Options.MaxConns open at once (open_conns.go).

// HTTPServer returns the http.Server that serves s, with the edge's
// timeouts and the bound on fresh connections; serve it on
// Listener's listener.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           s.fresh.handler(s.e),
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		ConnState:         s.fresh.connState,
		ConnContext:       withConn,
	}
}

// Listener returns the listener to serve HTTPServer on: ln accepting only
// while there is room among the open connections (openConns.room) and
// among the fresh ones (freshConns.room); over TLS when tlsCfg is set,
// else reading each connection's first request to serve websocket
// upgrades itself (upgrades.go).
func (s *Server) Listener(ln net.Listener, tlsCfg *tls.Config) net.Listener {
	ln = &gatedListener{Listener: ln, open: s.open, fresh: &s.fresh, closed: make(chan struct{})}
	if tlsCfg != nil {
		return tls.NewListener(ln, tlsCfg)
	}
	return newUpgradeListener(s, ln)
}

type gatedListener struct {
	net.Listener
	open  *openConns
	fresh *freshConns

	closed    chan struct{} // closed by Close: an Accept waiting for room goes on, to fail
	closeOnce sync.Once
}

// Accept waits for room among the open connections, then among the fresh
// ones. At the fresh bound, with none to close yet, it looks at the next
// connection in the queue rather than wait: one that has sent part of a
// request's header and not its end, after waiting its turn in the queue,
// is closed at once (a flood that sends its header a byte at a time is
// shed at the pace the daemon can accept, and what is behind it in the
// queue, the owner's request say, is not kept waiting); one whose header
// is whole is served, as it is about to be; one that sent nothing, or
// bytes that are not a request's (TLS), waits for room as before.
func (l *gatedListener) Accept() (net.Conn, error) {
	for {
		l.open.room(l.closed)
		roomy := l.fresh.roomWithin(l.closed, 0)
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc := l.open.track(c)
		if roomy || l.admit(c, tc) {
			return tc, nil
		}
	}
}

// peekAgain is how often a connection accepted at the fresh bound that
// had sent nothing is looked at again while it waits for room.
const peekAgain = 10 * time.Millisecond

// admit decides on c (tracked as tc), accepted at the fresh bound: false
// if it was closed for a header begun and not ended. One that has sent
// nothing that says waits for room, looked at again meanwhile: its
// request may come whole, or in part, first.
func (l *gatedListener) admit(c, tc net.Conn) bool {
	for {
		switch peekRequest(c) {
		case headerWhole:
			if p, ok := tc.(interface{ request() *requestProgress }); ok {
				p.request().whole.Store(true) // not fresh: connState leaves it out
			}
			return true
		case headerPartial:
			l.fresh.shed.Add(1)
			tc.Close()
			return false
		}
		if l.fresh.roomWithin(l.closed, peekAgain) {
			return true
		}
		select {
		case <-l.closed:
			return true // Accept's next call fails
		default:
		}
	}
}

// Close closes the listener and wakes an Accept waiting for room:
// http.Server's Shutdown and Close wait for their accept loop to return
// before anything else, and at a bound nothing else would wake it until a
// connection closed.
func (l *gatedListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// keepAliveForTokens is the root middleware: a response closes its
// connection unless the request proved a token (requireToken says so by
// setting the principal).
func (s *Server) keepAliveForTokens(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Before(func() {
			_, ok := principalOf(c)
			if !ok && c.Response().Status != http.StatusSwitchingProtocols {
				c.Response().Header().Set("Connection", "close")
			}
		})
		return next(c)
	}
}

// checkHost is the root middleware that refuses a Host header the daemon
// does not answer to (allowedName): a name a web page controls cannot
// reach the daemon by resolving to its address (DNS rebinding), so only
// loopback names, the names the operator gave (--host, the certificate's)
// and, beyond loopback, IP addresses are served. A Host that is not a
// name or address and a decimal port is refused first: the page's policy
// and the ws_url of shares and bots are built from the Host, and nothing
// else may reach them. Last, an Origin of another scheme (checkOrigin).
// The health checks are let through whatever their Host: they carry no
// data, and a balancer's probe may send any Host, or none.
func (s *Server) checkHost(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if p := c.Path(); p == "/healthz" || p == "/readyz" {
			return next(c) // no data a page could want; a balancer's probe may send any Host, or none
		}
		if err := s.hostRefused(c.Request()); err != nil {
			return err
		}
		return next(c)
	}
}

// hostRefused is checkHost's refusal of r, if any.
func (s *Server) hostRefused(r *http.Request) error {
	host := r.Host
	name, ok := hostName(host)
	if !ok {
		return wire.Errorf(wire.CodeBadRequest, "host %q is not a DNS name or an IP address, with or without a decimal port", host)
	}
	if !s.allowedName(name) {
		if !s.opts.Public {
			return wire.Errorf(wire.CodeForbidden, "host %q is not a loopback name or address, its certificate's names or --host; this daemon listens on loopback only", host)
		}
		return wire.Errorf(wire.CodeForbidden, "host %q is not a name this daemon answers to (an IP address, a loopback name, its certificate's names or --host)", host)
	}
	return checkOrigin(r)
}

// checkOrigin refuses a request whose Origin has another scheme than the
// one the daemon is reached by (https when it serves TLS, or a proxy
// before it that ends TLS says so: wsURL's forwardedTLS). Such a page is
// another origin on the same host, say one served in clear by whoever is
// on the network; coder/websocket compares an Origin's host with the
// Host, not its scheme. A request without Origin is not from a page.
func checkOrigin(r *http.Request) error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	want := "http"
	if r.TLS != nil || forwardedTLS(r.Header) {
		want = "https"
	}
	if scheme, _, _ := strings.Cut(origin, "://"); !strings.EqualFold(scheme, want) {
		return wire.Errorf(wire.CodeForbidden, "origin %q is not of this daemon, which is reached by %s://", origin, want)
	}
	return nil
}

// allowedHost says whether a Host header (with or without a port) is well
// formed (hostName) and names the daemon (allowedName).
func (s *Server) allowedHost(host string) bool {
	name, ok := hostName(host)
	return ok && s.allowedName(name)
}

// allowedName says whether a host name (hostName's) is one the daemon
// answers to: a loopback name or address, and the names of Options.Hosts
// (the operator's, also on loopback, where a proxy on the machine may
// forward one); beyond loopback (Options.Public) also any IP address,
// which no DNS name can stand for.
func (s *Server) allowedName(name string) bool {
	if loopbackHost(name) || slices.ContainsFunc(s.opts.Hosts, func(pat string) bool { return hostMatches(pat, name) }) {
		return true
	}
	return s.opts.Public && net.ParseIP(name) != nil
}

// hostName returns the name of a Host header, without its port, brackets
// or final dot, and whether the header is well formed: a DNS name or an
// IPv4 address, or an IPv6 address in brackets, then perhaps a colon and
// a decimal port. What is well formed holds only letters, digits and
// ".-:[]", so it can go into a header or a URL as it is.
func hostName(host string) (string, bool) {
	name, port, err := net.SplitHostPort(host)
	switch {
	case err == nil:
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return "", false
		}
	case strings.HasPrefix(host, "["): // no port
		n, ok := strings.CutSuffix(host[1:], "]")
		if !ok {
			return "", false
		}
		name = n
	default:
		name = host
	}
	bracketed := strings.HasPrefix(host, "[")
	if ip := net.ParseIP(name); ip != nil {
		// Brackets around an IPv6 address and only there; no zone.
		return name, bracketed == strings.Contains(name, ":")
	}
	name = strings.TrimSuffix(name, ".")
	return name, !bracketed && dnsName(name)
}

// dnsName says whether name is a DNS name: dot-separated labels of
// letters, digits and inner hyphens.
func dnsName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// loopbackHost says whether a host name (no port) names this machine's
// loopback: localhost, 127.0.0.0/8 or ::1.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostMatches says whether host is the name pat, ignoring case and a
// final dot; "*.example.com" matches one label in place of the star, as
// in a certificate.
func hostMatches(pat, host string) bool {
	pat = strings.TrimSuffix(pat, ".")
	if rest, ok := strings.CutPrefix(pat, "*."); ok {
		label, parent, found := strings.Cut(host, ".")
		return found && label != "" && strings.EqualFold(parent, rest)
	}
	return strings.EqualFold(pat, host)
}
