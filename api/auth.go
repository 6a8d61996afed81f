package api

import (
	"crypto/subtle"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"albedo/api/wire"
	"albedo/hub"
)

// Roles of a token (PROTOCOL.md, "Roles, bots and viewers").
const (
	RoleOwner  = hub.RoleOwner
	RoleBot    = hub.RoleBot
	RoleViewer = hub.RoleViewer
)

var (
	ownerOnly = []string{RoleOwner}
	ownerBot  = []string{RoleOwner, RoleBot}
	everyone  = []string{RoleOwner, RoleBot, RoleViewer}
	botOnly   = []string{RoleBot}
)

// permissions is the one place roles are enforced: every HTTP route (by
// method and echo path) and every websocket op names the roles allowed.
// Session scope (a viewer's one session, a bot's list) is checked on top,
// against the session the request names.
var permissions = map[string][]string{
	"GET /v1/sessions":                      ownerBot, // a bot sees its sessions only
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
	"GET /v1/bots":                          ownerOnly,
	"POST /v1/bots":                         ownerOnly,
	"DELETE /v1/bots/:name":                 ownerOnly,
	"POST /v1/daemon/shutdown":              ownerOnly,
	"GET /v1/ws":                            everyone,

	"ws:" + wire.OpHello:     everyone,
	"ws:" + wire.OpPing:      everyone,
	"ws:" + wire.OpSub:       everyone,
	"ws:" + wire.OpUnsub:     everyone,
	"ws:" + wire.OpSend:      ownerBot,
	"ws:" + wire.OpInterrupt: ownerOnly,
	"ws:" + wire.OpPost:      botOnly,
	"ws:" + wire.OpServe:     botOnly,
	"ws:" + wire.OpReply:     botOnly,
}

// authorize says whether p may do op, on session when one is named.
func authorize(p hub.Principal, op, session string) *wire.Error {
	roles, ok := permissions[op]
	if !ok || !slices.Contains(roles, p.Role) {
		return wire.Errorf(wire.CodeForbidden, "a %s token may not %s", p.Role, describe(op))
	}
	if session != "" && !p.CanSee(session) {
		return wire.Errorf(wire.CodeForbidden, "this %s token is not for session %q", p.Role, session)
	}
	return nil
}

func describe(op string) string {
	if strings.HasPrefix(op, "ws:") {
		return "use the websocket op " + strings.TrimPrefix(op, "ws:")
	}
	return "call " + op
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
		return hub.Principal{Role: RoleOwner, Name: "user"}, true
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
		op := c.Request().Method + " " + c.Path()
		if _, routed := permissions[op]; routed {
			if werr := authorize(p, op, c.Param("id")); werr != nil {
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
