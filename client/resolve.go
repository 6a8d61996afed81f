package client

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"albedo/wire"
)

// ShortIDLen is how many of an id's last characters the terminal shows
// for an untitled session: the last ones, because a UUIDv7 begins with a
// clock and sessions made the same minute share their first characters.
const ShortIDLen = 8

// ShortID is the id the terminal shows: its last ShortIDLen characters
// (the whole id when it is shorter).
func ShortID(id string) string {
	if len(id) > ShortIDLen {
		return id[len(id)-ShortIDLen:]
	}
	return id
}

// AmbiguousError is ResolveSession's answer to a name that fits more than
// one session. Candidates are in the sessions list's order (most recently
// active first).
type AmbiguousError struct {
	Name       string
	Candidates []wire.Session
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q names %d sessions; give more of the id:", e.Name, len(e.Candidates))
	for _, s := range e.Candidates {
		title := s.Title
		if title == "" {
			title = "(untitled)"
		}
		fmt.Fprintf(&b, "\n  %s  %s", s.ID, title)
	}
	return b.String()
}

// ResolveSession finds the one session that name names, trying in turn:
//
//  1. the full id (one GET, no list);
//  2. an exact title, or the short id the terminal shows (ShortID);
//  3. a prefix or a suffix of the id.
//
// The first rule that fits exactly one session wins; a rule that fits
// several is an *AmbiguousError listing them. No fit is an *Error with code
// not_found, as the daemon's own would be.
func (c *Client) ResolveSession(ctx context.Context, name string) (wire.Session, error) {
	if strings.TrimSpace(name) == "" {
		return wire.Session{}, &Error{Status: http.StatusBadRequest, Code: wire.CodeBadRequest, Message: "a session must be named: its id, short id or title"}
	}
	s, err := c.Session(ctx, name)
	if err == nil {
		return s, nil
	}
	// not_found is the common case (a short id); bad_request is a name
	// that cannot be an id at all (a title with spaces).
	if code := Code(err); code != wire.CodeNotFound && code != wire.CodeBadRequest {
		return wire.Session{}, err
	}
	all, err := c.Sessions(ctx)
	if err != nil {
		return wire.Session{}, err
	}
	return MatchSession(all, name)
}

// MatchSession applies ResolveSession's rules to a list of sessions.
func MatchSession(all []wire.Session, name string) (wire.Session, error) {
	rules := []func(s wire.Session) bool{
		func(s wire.Session) bool { return s.ID == name },
		func(s wire.Session) bool { return s.Title == name || ShortID(s.ID) == name },
		func(s wire.Session) bool { return strings.HasPrefix(s.ID, name) || strings.HasSuffix(s.ID, name) },
	}
	for _, fits := range rules {
		var found []wire.Session
		for _, s := range all {
			if fits(s) {
				found = append(found, s)
			}
		}
		switch len(found) {
		case 0:
			continue
		case 1:
			return found[0], nil
		default:
			return wire.Session{}, &AmbiguousError{Name: name, Candidates: found}
		}
	}
	return wire.Session{}, &Error{Status: http.StatusNotFound, Code: wire.CodeNotFound,
		Message: fmt.Sprintf("no session is named %q (an id, the short id shown, a unique prefix or suffix of an id, or an exact title)", name)}
}
