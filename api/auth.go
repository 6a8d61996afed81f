package api

import (
	"crypto/subtle"
	"strings"

	"github.com/labstack/echo/v4"

	"albedo/api/wire"
)

// Roles of a token (PROTOCOL.md, "Roles, bots and viewers").
const (
	RoleOwner  = "owner"
	RoleBot    = "bot"
	RoleViewer = "viewer"
)

// principal is who a request acts as.
type principal struct {
	Role string
	Name string
}

// bearer returns the token of an Authorization header, or "".
func bearer(h string) string {
	const p = "Bearer "
	if len(h) > len(p) && strings.EqualFold(h[:len(p)], p) {
		return strings.TrimSpace(h[len(p):])
	}
	return ""
}

// authenticate resolves a token to a principal. Today only the owner token
// of daemon.json exists; bot and viewer tokens plug in here.
func (s *Server) authenticate(token string) (principal, bool) {
	if token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.opts.Token)) == 1 {
		return principal{Role: RoleOwner, Name: "user"}, true
	}
	return principal{}, false
}

// requireToken is the middleware of every route but /healthz. The websocket
// route may instead carry its token in hello, so a missing header is let
// through there (a wrong one is not).
func (s *Server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Request().Header.Get("Authorization")
		tok := bearer(h)
		if tok == "" && c.Path() == "/v1/ws" && h == "" {
			return next(c)
		}
		p, ok := s.authenticate(tok)
		if !ok {
			if tok == "" {
				return wire.Errorf(wire.CodeUnauthorized, "missing Authorization: Bearer <token>")
			}
			return wire.Errorf(wire.CodeUnauthorized, "unknown or revoked token")
		}
		c.Set("principal", p)
		return next(c)
	}
}

func principalOf(c echo.Context) (principal, bool) {
	p, ok := c.Get("principal").(principal)
	return p, ok
}
