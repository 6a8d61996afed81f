package api

import (
	"crypto/subtle"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"albedo/hub"
	"albedo/wire"
)

// The sets of token roles (docs/protocol.md, "Roles, tokens and bots")
// that the permission tables name.
var (
	ownerOnly = []wire.TokenRole{wire.TokenOwner}
	ownerBot  = []wire.TokenRole{wire.TokenOwner, wire.TokenBot}
	everyone  = []wire.TokenRole{wire.TokenOwner, wire.TokenBot, wire.TokenViewer}
	botOnly   = []wire.TokenRole{wire.TokenBot}
)

// permissions names the roles allowed on every HTTP route, by method and
// echo path; wsOps (ws_ops.go) does the same for every websocket op. These
// two tables are the only places roles are enforced. Session scope (a
// viewer's one session, a bot's list) is checked on top, against the
// session the request names.
var permissions = map[string][]wire.TokenRole{
	"GET /v1/sessions":                      everyone, // a bot or a viewer sees its sessions only
	"POST /v1/sessions":                     ownerOnly,
	"PUT /v1/sessions/:id":                  ownerOnly,
	"GET /v1/sessions/:id":                  everyone,
	"PATCH /v1/sessions/:id":                ownerOnly,
	"DELETE /v1/sessions/:id":               ownerOnly,
	"GET /v1/sessions/:id/events":           everyone,
	"PUT /v1/sessions/:id/inputs/:input_id": ownerBot,
	"GET /v1/sessions/:id/inputs/:input_id": ownerBot,
	"POST /v1/sessions/:id/interrupt":       ownerOnly,
	"GET /v1/sessions/:id/status":           everyone,
	"POST /v1/sessions/:id/shares":          ownerOnly,
	"DELETE /v1/sessions/:id/shares":        ownerOnly,
	"GET /v1/providers":                     ownerOnly,
	"GET /v1/bots":                          ownerOnly,
	"POST /v1/bots":                         ownerOnly,
	"DELETE /v1/bots/:name":                 ownerOnly,
	"POST /v1/daemon/shutdown":              ownerOnly,
	"GET /v1/ws":                            everyone,
}

// authorize says whether p, of one of roles, may do what (words for the
// refusal: "call GET /v1/bots"), on session when one is named.
func authorize(p hub.Principal, roles []wire.TokenRole, what, session string) *wire.Error {
	if allowed(p, roles, session) {
		return nil
	}
	if !slices.Contains(roles, p.Role) {
		return wire.Errorf(wire.CodeForbidden, "%s token may not %s", withArticle(string(p.Role)), what)
	}
	if session != "" && !p.CanSee(session) {
		return wire.Errorf(wire.CodeForbidden, "this %s token is not for session %q", p.Role, session)
	}
	return nil
}

// allowed says whether p may act, by its role, on session ("" for none):
// authorize without the words of a refusal.
func allowed(p hub.Principal, roles []wire.TokenRole, session string) bool {
	return slices.Contains(roles, p.Role) && (session == "" || p.CanSee(session))
}

// withArticle puts "a" or "an" before a role's name.
func withArticle(role string) string {
	if role != "" && strings.ContainsRune("aeiou", rune(role[0])) {
		return "an " + role
	}
	return "a " + role
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
			if werr := authorize(p, roles, "call "+route, c.Param("id")); werr != nil {
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
