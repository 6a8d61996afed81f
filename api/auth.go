package api

import (
	"crypto/subtle"
	"strings"

	"github.com/labstack/echo/v4"

	"albedo/hub"
	"albedo/wire"
)

// permissions names who may call every HTTP route, by method and echo
// path: the roles, and the access to the session the route names;
// ws.ops (api/ws/ops.go) does the same for every websocket op. These two
// tables are the only places roles and access are enforced
// (hub/access.go).
var permissions = map[string]hub.Rule{
	"GET /v1/sessions":                       {Roles: hub.Everyone}, // each sees their sessions only
	"POST /v1/sessions":                      {Roles: hub.People},
	"PUT /v1/sessions/:id":                   {Roles: hub.People}, // an id taken by a session they cannot see is a conflict (hub)
	"GET /v1/sessions/:id":                   {Roles: hub.Everyone, Need: wire.AccessRead},
	"PATCH /v1/sessions/:id":                 {Roles: hub.People, Need: wire.AccessCreator},
	"DELETE /v1/sessions/:id":                {Roles: hub.People, Need: wire.AccessCreator},
	"GET /v1/sessions/:id/events":            {Roles: hub.Everyone, Need: wire.AccessRead},
	"POST /v1/sessions/:id/import":           {Roles: hub.OwnerOnly},                     // what it writes is attributed to anyone: admins only
	"POST /v1/sessions/:id/fork":             {Roles: hub.People, Need: wire.AccessRead}, // the fork is theirs
	"POST /v1/sessions/:id/compact":          {Roles: hub.Speakers, Need: wire.AccessWrite},
	"GET /v1/sessions/:id/forks":             {Roles: hub.Everyone, Need: wire.AccessRead}, // each sees the forks they may read
	"PUT /v1/sessions/:id/read":              {Roles: hub.Speakers, Need: wire.AccessRead},
	"GET /v1/sessions/:id/read":              {Roles: hub.Speakers, Need: wire.AccessRead},
	"PUT /v1/sessions/:id/inputs/:input_id":  {Roles: hub.Writers, Need: wire.AccessWrite},
	"GET /v1/sessions/:id/inputs/:input_id":  {Roles: hub.Writers, Need: wire.AccessWrite},
	"POST /v1/sessions/:id/interrupt":        {Roles: hub.Speakers, Need: wire.AccessWrite},
	"GET /v1/sessions/:id/status":            {Roles: hub.Everyone, Need: wire.AccessRead},
	"POST /v1/sessions/:id/shares":           {Roles: hub.People, Need: wire.AccessCreator},
	"DELETE /v1/sessions/:id/shares":         {Roles: hub.People, Need: wire.AccessCreator},
	"GET /v1/sessions/:id/shares":            {Roles: hub.People, Need: wire.AccessCreator},
	"DELETE /v1/sessions/:id/shares/:label":  {Roles: hub.People, Need: wire.AccessCreator},
	"GET /v1/sessions/:id/grants":            {Roles: hub.People, Need: wire.AccessCreator},
	"PUT /v1/sessions/:id/grants/:member":    {Roles: hub.People, Need: wire.AccessCreator},
	"DELETE /v1/sessions/:id/grants/:member": {Roles: hub.People, Need: wire.AccessCreator},
	"GET /v1/members":                        {Roles: hub.OwnerOnly},
	"POST /v1/members":                       {Roles: hub.OwnerOnly},
	"DELETE /v1/members/:name":               {Roles: hub.OwnerOnly},
	"POST /v1/me/tokens":                     {Roles: hub.People},
	"GET /v1/search":                         {Roles: hub.Everyone}, // each finds what they may read only
	"GET /v1/usage":                          {Roles: hub.OwnerOnly},
	"GET /v1/providers":                      {Roles: hub.People},
	"GET /v1/bots":                           {Roles: hub.OwnerOnly},
	"POST /v1/bots":                          {Roles: hub.OwnerOnly},
	"DELETE /v1/bots/:name":                  {Roles: hub.OwnerOnly},
	"POST /v1/daemon/shutdown":               {Roles: hub.OwnerOnly},
	"GET /v1/ws":                             {Roles: hub.Everyone},
}

// LinkExpired is the reason of the close (4401) of a connection whose
// link expired, beside "token revoked": clients say which.
const LinkExpired = "link expired"

// bearer returns the token of an Authorization header, or "".
func bearer(h string) string {
	const p = "Bearer "
	if len(h) > len(p) && strings.EqualFold(h[:len(p)], p) {
		return strings.TrimSpace(h[len(p):])
	}
	return ""
}

// authenticate resolves a token: daemon.json's, which acts as the home's
// own member (Options.Owner), else a stored one.
func (s *Server) authenticate(token string) (hub.Principal, bool) {
	if token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.opts.Token)) == 1 {
		return s.owner, true
	}
	if strings.HasPrefix(token, sessionPrefix) {
		return s.fromSessionToken(token)
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
			if s.hub.TokenExpired(tok) {
				return wire.Errorf(wire.CodeUnauthorized, "this link has expired")
			}
			return wire.Errorf(wire.CodeUnauthorized, "unknown or revoked token")
		}
		// A path echo did not route (404, 405) has no entry: let echo say
		// so. Every route has one (TestEveryRouteHasPermissions).
		route := c.Request().Method + " " + c.Path()
		if rule, routed := permissions[route]; routed {
			if werr := p.Authorize(rule, "call "+route, c.Param("id")); werr != nil {
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
