package api

import (
	"errors"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"

	"albedo/web"
	"albedo/wire"
)

// The browser client (package web): GET / is its page, GET /assets/… its
// scripts, styles and vendored libraries. They hold no secret and need no
// token: the page reads its token from the link's fragment, which never
// reaches a server. Every response carries a Content-Security-Policy that
// lets the page run only its own scripts and styles and talk only to this
// daemon, so that nothing a message holds can load or run anything.

// contentTypes are the types of the files the page is made of.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".mjs":  "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
}

func (s *Server) page(c echo.Context) error { return s.serveFile(c, "index.html") }

func (s *Server) asset(c echo.Context) error {
	name := c.Param("*")
	if name == "" || strings.Contains(name, "..") || name == "index.html" {
		return wire.Errorf(wire.CodeNotFound, "no such asset")
	}
	return s.serveFile(c, name)
}

func (s *Server) serveFile(c echo.Context, name string) error {
	b, err := fs.ReadFile(web.Static, name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
		return wire.Errorf(wire.CodeNotFound, "no such asset %q", name)
	}
	if err != nil {
		return err
	}
	ct, ok := contentTypes[path.Ext(name)]
	if !ok {
		ct = "text/plain; charset=utf-8" // the licences, VERSIONS
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", pageCSP(wsURL(c.Request())))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	return c.Blob(http.StatusOK, ct, b)
}

// pageCSP is the page's policy: its own scripts and styles only (no inline
// script or style, no eval), images only from itself (a message cannot
// make the browser fetch a tracker) and from blob: URLs, which only the
// page's scripts make (the files of messages, fetched with its token,
// and the thumbnails of files being attached), connections only to this
// daemon's HTTP and websocket (ws, the websocket's URL), no frames, no
// forms, no plugins, no <base>.
func pageCSP(ws string) string {
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
		"connect-src 'self' " + ws + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// wsURL is the websocket's URL as the client of r reaches it: wss:// when
// r came over TLS, to the daemon or to a proxy before it that says so
// (X-Forwarded-Proto or Forwarded's proto, as a load balancer that ends
// TLS sets them: --insecure-no-tls). Either header only changes what the
// requester itself is told. r.Host goes in as it is: checkHost lets
// through only a name or address and a decimal port.
func wsURL(r *http.Request) string {
	if r.TLS != nil || forwardedTLS(r.Header) {
		return "wss://" + r.Host + "/v1/ws"
	}
	return "ws://" + r.Host + "/v1/ws"
}

// forwardedTLS says whether the proxy nearest the client (the first
// value) says the client's request came over HTTPS.
func forwardedTLS(h http.Header) bool {
	if v := h.Get("X-Forwarded-Proto"); v != "" {
		first, _, _ := strings.Cut(v, ",")
		return strings.EqualFold(strings.TrimSpace(first), "https")
	}
	first, _, _ := strings.Cut(h.Get("Forwarded"), ",")
	for pair := range strings.SplitSeq(first, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(pair), "=")
		if strings.EqualFold(k, "proto") {
			return strings.EqualFold(strings.Trim(v, `"`), "https")
		}
	}
	return false
}
