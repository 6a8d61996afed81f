package api

import (
	"crypto/subtle"
	"strings"

	"github.com/labstack/echo/v4"

	"albedo/hub/access"
	"albedo/wire"
)

// permissions names who may call every HTTP route, by method and echo
// path: the roles, and the access to the session the route names;
// ws.ops (api/ws/ops.go) does the same for every websocket op. These two
// tables are the only places roles and access are enforced
// (albedo/hub/access).
var permissions = map[string]access.Rule{
	"GET /v1/sessions":                         {Roles: access.Everyone}, // each sees their sessions only
	"POST /v1/sessions":                        {Roles: access.People},
	"PUT /v1/sessions/:id":                     {Roles: access.People}, // an id taken by a session they cannot see is a conflict (hub)
	"GET /v1/sessions/:id":                     {Roles: access.Everyone, Need: wire.AccessRead},
	"PATCH /v1/sessions/:id":                   {Roles: access.People, Need: wire.AccessCreator},
	"DELETE /v1/sessions/:id":                  {Roles: access.People, Need: wire.AccessCreator},
	"GET /v1/sessions/:id/events":              {Roles: access.Everyone, Need: wire.AccessRead},
	"POST /v1/sessions/:id/import":             {Roles: access.OwnerOnly},                     // what it writes is attributed to anyone: admins only
	"POST /v1/sessions/:id/fork":               {Roles: access.People, Need: wire.AccessRead}, // the fork is theirs
	"POST /v1/sessions/:id/compact":            {Roles: access.Speakers, Need: wire.AccessWrite},
	"GET /v1/sessions/:id/forks":               {Roles: access.Everyone, Need: wire.AccessRead}, // each sees the forks they may read
	"PUT /v1/sessions/:id/read":                {Roles: access.Speakers, Need: wire.AccessRead},
	"GET /v1/sessions/:id/read":                {Roles: access.Speakers, Need: wire.AccessRead},
	"PUT /v1/sessions/:id/pin":                 {Roles: access.Speakers, Need: wire.AccessRead},
	"DELETE /v1/sessions/:id/pin":              {Roles: access.Speakers, Need: wire.AccessRead},
	"GET /v1/me/pins":                          {Roles: access.Speakers},
	"PUT /v1/sessions/:id/inputs/:input_id":    {Roles: access.Writers, Need: wire.AccessWrite},
	"GET /v1/sessions/:id/inputs/:input_id":    {Roles: access.Writers, Need: wire.AccessWrite},
	"POST /v1/sessions/:id/interrupt":          {Roles: access.Speakers, Need: wire.AccessWrite},
	"POST /v1/sessions/:id/continue":           {Roles: access.Speakers, Need: wire.AccessWrite},
	"GET /v1/sessions/:id/status":              {Roles: access.Everyone, Need: wire.AccessRead},
	"GET /v1/sessions/:id/approvals":           {Roles: access.Everyone, Need: wire.AccessRead},
	"POST /v1/sessions/:id/approvals/:call_id": {Roles: access.People, Need: wire.AccessWrite}, // a decision is a person's
	"GET /v1/tools":                            {Roles: access.People},                         // a session's (?session=ID, read access, checked in the handler), or every one (admins)
	"POST /v1/sessions/:id/shares":             {Roles: access.People, Need: wire.AccessCreator},
	"DELETE /v1/sessions/:id/shares":           {Roles: access.People, Need: wire.AccessCreator},
	"GET /v1/sessions/:id/shares":              {Roles: access.People, Need: wire.AccessCreator},
	"DELETE /v1/sessions/:id/shares/:label":    {Roles: access.People, Need: wire.AccessCreator},
	"GET /v1/sessions/:id/grants":              {Roles: access.People, Need: wire.AccessCreator},
	"PUT /v1/sessions/:id/grants/:member":      {Roles: access.People, Need: wire.AccessCreator},
	"DELETE /v1/sessions/:id/grants/:member":   {Roles: access.People, Need: wire.AccessCreator},
	"GET /v1/members":                          {Roles: access.OwnerOnly},
	"POST /v1/members":                         {Roles: access.OwnerOnly},
	"DELETE /v1/members/:name":                 {Roles: access.OwnerOnly},
	"PATCH /v1/members/:name":                  {Roles: access.OwnerOnly},
	"POST /v1/me/tokens":                       {Roles: access.People},
	"GET /v1/search":                           {Roles: access.Everyone}, // each finds what they may read only
	"GET /v1/usage":                            {Roles: access.OwnerOnly},
	"GET /v1/providers":                        {Roles: access.People},
	"GET /v1/providers/:name/models":           {Roles: access.People},
	"GET /v1/bots":                             {Roles: access.OwnerOnly},
	"POST /v1/bots":                            {Roles: access.OwnerOnly},
	"DELETE /v1/bots/:name":                    {Roles: access.OwnerOnly},
	"GET /v1/tokens":                           {Roles: access.OwnerOnly},
	"POST /v1/tokens":                          {Roles: access.OwnerOnly},
	"DELETE /v1/tokens/:name":                  {Roles: access.OwnerOnly},
	"POST /v1/daemon/shutdown":                 {Roles: access.OwnerOnly},
	"GET /v1/ws":                               {Roles: access.Everyone},
	// Files: whoever may write somewhere uploads; a blob is read by who
	// uploaded it and by whoever may read a session that carries it,
	// checked in the handler (blobs.go).
	"PUT /v1/blobs/:sha256":  {Roles: access.Writers},
	"HEAD /v1/blobs/:sha256": {Roles: access.Everyone},
	"GET /v1/blobs/:sha256":  {Roles: access.Everyone},
	// albedo as an MCP server: its tools act through this API with the
	// same token, each checked here as any request (mcp.go).
	"POST /v1/mcp":   {Roles: access.Everyone},
	"GET /v1/mcp":    {Roles: access.Everyone},
	"DELETE /v1/mcp": {Roles: access.Everyone},
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
func (s *Server) authenticate(token string) (access.Principal, bool) {
	if token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.opts.Token)) == 1 {
		return s.ownerP(), true
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
		if h == "" && c.Path() == "/v1/ws" {
			return next(c)
		}
		p, werr := s.tokenPrincipal(h)
		if werr != nil {
			return werr
		}
		// A path echo did not route (404, 405) has no entry: let echo say
		// so. Every route has one (TestEveryRouteHasPermissions).
		route := c.Request().Method + " " + c.Path()
		if rule, routed := permissions[route]; routed {
			if werr := p.Authorize(rule, doing[route], c.Param("id")); werr != nil {
				return werr
			}
		}
		c.Set("principal", p)
		return next(c)
	}
}

// tokenPrincipal resolves an Authorization header's bearer token.
func (s *Server) tokenPrincipal(h string) (access.Principal, *wire.Error) {
	tok := bearer(h)
	p, ok := s.authenticate(tok)
	switch {
	case ok:
		return p, nil
	case tok == "":
		return p, wire.Errorf(wire.CodeUnauthorized, "missing Authorization: Bearer <token>")
	case s.hub.TokenExpired(tok):
		return p, wire.Errorf(wire.CodeUnauthorized, "this link has expired")
	}
	return p, wire.Errorf(wire.CodeUnauthorized, "unknown or revoked token")
}

func principalOf(c echo.Context) (access.Principal, bool) {
	p, ok := c.Get("principal").(access.Principal)
	return p, ok
}
