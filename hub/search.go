package hub

import (
	"context"
	"errors"
	"strconv"

	"albedo/db"
	"albedo/wire"
)

// Search bounds: a page holds at most MaxSearchLimit results, and one
// request looks through at most searchScan hits for those its caller may
// read (a member's search skips what others' sessions hold), so that a
// search's cost never grows with the store: past it, the page ends with
// a cursor, and the next request goes on from there.
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 100
	searchScan         = 1000
)

// Search finds the messages holding text that p may read, newest first:
// in session only, if it is not "", from the cursor after, at most
// limit. A query people can get wrong (db.ParseQuery) is a bad_request
// that says what is wrong.
func (h *Hub) Search(ctx context.Context, p Principal, text, session, after string, limit int) (wire.SearchResults, error) {
	out := wire.SearchResults{Results: []wire.SearchResult{}}
	q, err := db.ParseQuery(text)
	if err != nil {
		return out, wire.Errorf(wire.CodeBadRequest, "q: %s", err.Error())
	}
	var before int64
	if after != "" {
		if before, err = strconv.ParseInt(after, 10, 64); err != nil || before <= 0 {
			return out, wire.Errorf(wire.CodeBadRequest, "after: not a cursor this daemon gave")
		}
	}
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	limit = min(limit, MaxSearchLimit)
	if session != "" && !p.CanSee(session) {
		return out, wire.Errorf(wire.CodeForbidden, "no access to session %q", session)
	}
	if session == "" && len(p.Sessions) == 1 && p.Role != wire.TokenOwner && p.Role != wire.TokenMember {
		session = p.Sessions[0] // a link's or a bot's one session: the store looks there alone
	}
	titles := map[string]string{}
	for scanned := 0; scanned < searchScan; {
		chunk := min(max(2*(limit-len(out.Results)), 50), searchScan-scanned)
		hits, err := h.db.Search(ctx, q, session, before, chunk)
		if err != nil {
			return out, wireErr(err)
		}
		for _, hit := range hits {
			scanned++
			before = hit.DocID
			if !p.CanSee(hit.Session) {
				continue
			}
			r, ok, err := h.searchResult(ctx, hit, titles)
			if err != nil {
				return out, err
			}
			if !ok {
				continue // deleted since it was found
			}
			out.Results = append(out.Results, r)
			if len(out.Results) == limit {
				out.Next = strconv.FormatInt(before, 10)
				return out, nil
			}
		}
		if len(hits) < chunk {
			return out, nil // nothing older matches
		}
	}
	out.Next = strconv.FormatInt(before, 10) // looked through searchScan: the next page goes on
	return out, nil
}

// searchResult is hit as a result: its event's role, author and time,
// its session's title; ok false if either is gone.
func (h *Hub) searchResult(ctx context.Context, hit db.SearchHit, titles map[string]string) (wire.SearchResult, bool, error) {
	title, seen := titles[hit.Session]
	if !seen {
		s, err := h.db.Session(ctx, hit.Session)
		if errors.Is(err, db.ErrNotFound) {
			return wire.SearchResult{}, false, nil
		}
		if err != nil {
			return wire.SearchResult{}, false, wireErr(err)
		}
		title, titles[hit.Session] = s.Title, s.Title
	}
	evs, err := h.db.EventsAfter(ctx, hit.Session, hit.Offset-1, 1, 0)
	if err != nil {
		return wire.SearchResult{}, false, wireErr(err)
	}
	if len(evs) == 0 || evs[0].Offset != hit.Offset {
		return wire.SearchResult{}, false, nil
	}
	ev, err := evs[0].Decode()
	if err != nil {
		return wire.SearchResult{}, false, err
	}
	return wire.SearchResult{Session: hit.Session, Title: title, Offset: hit.Offset, Type: ev.Type, Role: ev.Role,
		Author: ev.Author, Text: hit.Snippet, At: ev.At}, true, nil
}
