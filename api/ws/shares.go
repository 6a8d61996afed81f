package ws

import (
	"slices"

	"github.com/coder/websocket"

	"albedo/hub/access"
	"albedo/wire"
)

// StatusTryAgainLater closes a websocket refused for its share of the
// daemon's connections (RFC 6455's 1013).
const StatusTryAgainLater websocket.StatusCode = 1013

// The daemon holds a bounded number of connections open (api's
// openConns). Without more, one principal could hold them all: one read
// link opening hundreds of websockets locked its owner out. So, at hello:
//
//   - a token's websockets are at most Options.MaxPerToken (a link's,
//     with all its guests; a bot's; a member's personal token), and
//   - links, guests and bots together hold at most Options.MaxOthers, so
//     that the rest of the bound is kept for people (owners and members).
//
// Owners (admins, owner tokens, daemon.json's token) have no share: the
// bound alone holds them. A refused hello is answered too_many, and the
// websocket closes with 1013 (try again later).

// shareKey is what p's websockets are counted under, and whether they
// are counted at all.
func shareKey(p access.Principal) (string, bool) {
	switch {
	case p.Role == wire.TokenOwner:
		return "", false
	case p.TokenID != "":
		return p.TokenID, true
	case p.MemberID != "":
		return "member:" + p.MemberID, true
	}
	return "role:" + string(p.Role), true
}

// people says whether p may use the room kept for people.
func people(p access.Principal) bool { return slices.Contains(access.People, p.Role) }

// takeShare counts one more websocket of p, or says why it may not have
// one. Every share taken is given back once (giveShare).
func (s *Server) takeShare(p access.Principal) *wire.Error {
	key, counted := shareKey(p)
	if !counted {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if max := s.opts.MaxPerToken; max > 0 && s.perToken[key] >= max {
		return wire.Errorf(wire.CodeTooMany, "this token has %d websockets open, its share of the daemon's connections; close one first", max)
	}
	if max := s.opts.MaxOthers; max > 0 && !people(p) && s.others >= max {
		return wire.Errorf(wire.CodeTooMany, "links, guests and bots hold %d websockets, all the daemon keeps for them; the rest is kept for its people", max)
	}
	if s.perToken == nil {
		s.perToken = map[string]int{}
	}
	s.perToken[key]++
	if !people(p) {
		s.others++
	}
	return nil
}

// giveShare counts one websocket of p fewer.
func (s *Server) giveShare(p access.Principal) {
	key, counted := shareKey(p)
	if !counted {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perToken[key]--; s.perToken[key] <= 0 {
		delete(s.perToken, key)
	}
	if !people(p) {
		s.others--
	}
}
