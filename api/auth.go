package api

import (
	"crypto/subtle"
	"strings"

	"github.com/labstack/echo/v4"

	"albedo/hub"
	"albedo/wire"
)

// permissions names the roles allowed on every HTTP route, by method and
// echo path; ws.ops (api/ws/ops.go) does the same for every websocket op.
// These two tables are the only places roles are enforced (hub/access.go). Session scope (a
// viewer's one session, a bot's list) is checked on top, against the
// session the request names.
var permissions = map[string][]wire.TokenRole{
	"GET /v1/sessions":                      hub.Everyone, // a bot or a viewer sees its sessions only
	"POST /v1/sessions":                     hub.OwnerOnly,
	"PUT /v1/sessions/:id":                  hub.OwnerOnly,
	"GET /v1/sessions/:id":                  hub.Everyone,
	"PATCH /v1/sessions/:id":                hub.OwnerOnly,
	"DELETE /v1/sessions/:id":               hub.OwnerOnly,
	"GET /v1/sessions/:id/events":           hub.Everyone,
	"PUT /v1/sessions/:id/inputs/:input_id": hub.OwnerBot,
	"GET /v1/sessions/:id/inputs/:input_id": hub.OwnerBot,
	"POST /v1/sessions/:id/interrupt":       hub.OwnerOnly,
	"GET /v1/sessions/:id/status":           hub.Everyone,
	"POST /v1/sessions/:id/shares":          hub.OwnerOnly,
	"DELETE /v1/sessions/:id/shares":        hub.OwnerOnly,
	"GET /v1/providers":                     hub.OwnerOnly,
	"GET /v1/bots":                          hub.OwnerOnly,
	"POST /v1/bots":                         hub.OwnerOnly,
	"DELETE /v1/bots/:name":                 hub.OwnerOnly,
	"POST /v1/daemon/shutdown":              hub.OwnerOnly,
	"GET /v1/ws":                            hub.Everyone,
}

// bearer returns the token of an Authorization header, or "".
func bearer(h string) string {
	const p = "Bearer "
	if len(h) > len(p) && strings.EqualFold(h[:len(p)], p) {
		return strings.TrimSpace(h[len(p):])
	}
	return ""
}

// authenticate resolves a token: the owner's (daemon.json), else a bot's or
// a viewer's.
func (s *Server) authenticate(token string) (hub.Principal, bool) {
	if token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.opts.Token)) == 1 {
		return hub.Principal{Role: wire.TokenOwner, Name: "user"}, true
	}
	return s.hub.Authenticate(token)
}

// requireToken is the middleware of every route but /healthz: it resolves
// the token and applies the permission table. The websocket route may carry
// its token in hello instead, so a missing header is let through there (a
// wrong one is not).
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
		// A path echo did not route (404, 405) has no entry: let echo say
		// so. Every route has one (TestEveryRouteHasPermissions).
		route := c.Request().Method + " " + c.Path()
		if roles, routed := permissions[route]; routed {
			if werr := p.Authorize(roles, "call "+route, c.Param("id")); werr != nil {
				return werr
			}
		}
		c.Set("principal", p)
		return next(c)
	}
}

func principalOf(c echo.Context) (hub.Principal, bool) {
	p, ok := c.Get("principal").(hub.Principal)
	return p, ok
}
