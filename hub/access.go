package hub

import (
	"slices"
	"strings"

	"albedo/wire"
)

// The sets of token roles (docs/protocol.md, "Roles, tokens and bots")
// that the permission tables name: api's for the HTTP routes, api/ws's
// for the websocket ops. Those two tables are the only places roles are
// enforced; session scope is checked on top, against the session a
// request names (Principal.CanSee).
var (
	OwnerOnly = []wire.TokenRole{wire.TokenOwner}
	OwnerBot  = []wire.TokenRole{wire.TokenOwner, wire.TokenBot}
	Everyone  = []wire.TokenRole{wire.TokenOwner, wire.TokenBot, wire.TokenViewer}
	BotOnly   = []wire.TokenRole{wire.TokenBot}
)

// Authorize says whether p, of one of roles, may do what (words for the
// refusal: "call GET /v1/bots"), on session when one is named.
func (p Principal) Authorize(roles []wire.TokenRole, what, session string) *wire.Error {
	if p.Allowed(roles, session) {
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

// Allowed says whether p may act, by its role, on session ("" for none):
// Authorize without the words of a refusal.
func (p Principal) Allowed(roles []wire.TokenRole, session string) bool {
	return slices.Contains(roles, p.Role) && (session == "" || p.CanSee(session))
}

// withArticle puts "a" or "an" before a role's name.
func withArticle(role string) string {
	if role != "" && strings.ContainsRune("aeiou", rune(role[0])) {
		return "an " + role
	}
	return "a " + role
}
