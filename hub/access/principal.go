package access

import (
	"slices"
	"strings"
	"time"

	"albedo/wire"
)

// Principal is who a token acts as.
type Principal struct {
	Role     wire.TokenRole // owner for an admin member
	Name     string         // the member's, the bot's, the owner token's; "viewer"
	TokenID  string         // "" for the daemon.json token
	Sessions []string       // a bot's, viewer's or guest's sessions; nil means all (a member's are in grants)
	MemberID string         // the member it is a token of (an admin's too); "" for none
	// ExpiresAt is when a link's token stops being accepted; zero for never.
	ExpiresAt time.Time

	grants *Table // where a member's access is looked up (grants.go)
}

// AuthorID is the stable id of p as an author (wire.Event.AuthorID): a
// member's id; "bot:NAME" for a bot; "token:NAME" for an owner token of no
// member; "viewer" or "owner" for what has neither.
func (p Principal) AuthorID() string {
	switch {
	case p.MemberID != "":
		return p.MemberID
	case p.Role == wire.TokenBot:
		return "bot:" + p.Name
	case p.Role == wire.TokenOwner && p.TokenID != "":
		return "token:" + p.Name
	case p.Role == wire.TokenGuest:
		return wire.GuestAuthorPrefix + p.TokenID + ":" + p.Name
	}
	return string(p.Role)
}

// Expired says whether p is a link past its end at now.
func (p Principal) Expired(now time.Time) bool {
	return !p.ExpiresAt.IsZero() && !now.Before(p.ExpiresAt)
}

// Author is p as the author of an input.
func (p Principal) Author() wire.Author { return wire.Author{Name: p.Name, ID: p.AuthorID()} }

// Sees lists the sessions p may see when that is a list (a member's, a
// bot's, a viewer's); nil means all.
func (p Principal) Sees() []string {
	if p.Role == wire.TokenMember {
		if p.grants == nil {
			return []string{}
		}
		return p.grants.SessionsOf(p.MemberID)
	}
	if p.Role == wire.TokenOwner {
		return nil
	}
	return p.Sessions
}

// The sets of token roles (docs/protocol.md, "Roles, tokens and bots")
// that the permission tables name: api's for the HTTP routes, api/ws's
// for the websocket ops. Those two tables are the only places roles are
// enforced; access to the session a request names is checked on top
// (Rule.Need, Principal.Access).
var (
	OwnerOnly = []wire.TokenRole{wire.TokenOwner}
	People    = []wire.TokenRole{wire.TokenOwner, wire.TokenMember}
	Writers   = []wire.TokenRole{wire.TokenOwner, wire.TokenMember, wire.TokenBot, wire.TokenGuest}
	Speakers  = []wire.TokenRole{wire.TokenOwner, wire.TokenMember, wire.TokenGuest}
	Everyone  = []wire.TokenRole{wire.TokenOwner, wire.TokenMember, wire.TokenBot, wire.TokenViewer, wire.TokenGuest}
	BotOnly   = []wire.TokenRole{wire.TokenBot}
)

// Rule is one entry of a permission table: the roles that may call a
// route or send an op, and the access to the session it names that the
// caller must hold. A rule with no Need, or a request that names no
// session, checks the roles alone.
type Rule struct {
	Roles []wire.TokenRole
	Need  wire.Access
}

// Rank orders accesses: none < read < write < creator.
func Rank(a wire.Access) int {
	switch a {
	case wire.AccessRead:
		return 1
	case wire.AccessWrite:
		return 2
	case wire.AccessCreator:
		return 3
	}
	return 0
}

// Access is what p may do in session: creator for an owner (an admin may
// do everything a creator may), a member's grant, write for a bot or a
// guest of its sessions, read for a viewer of its own; "" for none.
func (p Principal) Access(session string) wire.Access {
	switch p.Role {
	case wire.TokenOwner:
		return wire.AccessCreator
	case wire.TokenMember:
		if p.grants == nil {
			return ""
		}
		return p.grants.Access(p.MemberID, session)
	case wire.TokenBot, wire.TokenGuest:
		if p.CanSee(session) {
			return wire.AccessWrite
		}
	case wire.TokenViewer:
		if p.CanSee(session) {
			return wire.AccessRead
		}
	}
	return ""
}

// CanSee says whether p may read session at all.
func (p Principal) CanSee(session string) bool {
	switch p.Role {
	case wire.TokenOwner:
		return true
	case wire.TokenMember:
		return p.Access(session) != ""
	}
	return p.Sessions == nil || slices.Contains(p.Sessions, session)
}

// Authorize says whether p may do what (words for the refusal, which
// people read: "delete the session") by rule, on session when one is
// named.
func (p Principal) Authorize(rule Rule, what, session string) *wire.Error {
	if p.Allowed(rule, session) {
		return nil
	}
	if !slices.Contains(rule.Roles, p.Role) {
		return wire.Errorf(wire.CodeForbidden, "%s may not %s", withArticle(roleWords(p.Role)), what)
	}
	has := p.Access(session)
	if has == "" {
		if p.Role == wire.TokenMember {
			return wire.Errorf(wire.CodeForbidden, "%s has no access to session %q", p.Name, session)
		}
		return wire.Errorf(wire.CodeForbidden, "this %s is not for session %q", roleWords(p.Role), session)
	}
	if rule.Need == wire.AccessCreator {
		return wire.Errorf(wire.CodeForbidden, "only an admin or the session's creator may %s", what)
	}
	return wire.Errorf(wire.CodeForbidden, "%s access to session %q does not let %s %s", has, session, p.Name, what)
}

// roleWords names a token's role as people know it: "a viewer's link".
func roleWords(r wire.TokenRole) string {
	switch r {
	case wire.TokenViewer:
		return "read link"
	case wire.TokenGuest:
		return "guest of a link"
	case wire.TokenOwner:
		return "owner"
	}
	return string(r)
}

// Allowed says whether p may act by rule on session ("" for none):
// Authorize without the words of a refusal.
func (p Principal) Allowed(rule Rule, session string) bool {
	if !slices.Contains(rule.Roles, p.Role) {
		return false
	}
	if session == "" || rule.Need == "" {
		return true
	}
	return Rank(p.Access(session)) >= Rank(rule.Need)
}

// withArticle puts "a" or "an" before a role's name.
func withArticle(role string) string {
	if role != "" && strings.ContainsRune("aeiou", rune(role[0])) {
		return "an " + role
	}
	return "a " + role
}
