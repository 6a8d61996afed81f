package hub

import (
	"context"
	"errors"
	"strconv"

	"albedo/db"
	"albedo/hub/access"
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
func (h *Hub) Search(ctx context.Context, p access.Principal, text, session, after string, limit int) (wire.SearchResults, error) {
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
	spans := db.Spans{{}} // every session: one pass with no session named
	if session != "" {
		if _, spans, err = h.db.SpansOf(ctx, session); err != nil {
			return out, wireErr(err)
		}
	}
	s := searching{h: h, p: p, q: q, out: &out, limit: limit, before: before, titles: map[string]string{}}
	// A fork's spans, newest first: its own messages were all written
	// after the ones it reads from its parent, whose documents are older
	// (lower docids), so one cursor pages through them all in order.
	for i := len(spans) - 1; i >= 0; i-- {
		done, err := s.span(ctx, spans[i], session)
		if err != nil || done {
			return out, err
		}
	}
	return out, nil
}

// searching is one request's search: where it has got to, and what it
// found.
type searching struct {
	h       *Hub
	p       access.Principal
	q       db.Query
	out     *wire.SearchResults
	limit   int
	before  int64
	scanned int
	titles  map[string]string
	through map[string][]readSpan // readThrough's, once read
}

// span searches one span of the named session (or every session, for a
// span of none), the hits of its range only, shown as the named session's.
// done says the page is full or the scan's bound was met.
//
// A span is asked of the store at most twice: a query's match is
// evaluated whole each time (the index's cost, for a query of many
// prefixes over a large store, is seconds), so the first ask is for about
// what the page needs and the second for all that is left of the scan.
// A caller who may read little of what matches (a member among others'
// sessions) so costs at most twice what an owner's search does.
func (s *searching) span(ctx context.Context, sp db.Span, session string) (done bool, _ error) {
	for asked := 0; s.scanned < searchScan; asked++ {
		chunk := searchScan - s.scanned
		if asked == 0 {
			chunk = min(max(2*(s.limit-len(s.out.Results)), 50), chunk)
		}
		s.h.stats.searches.Add(1)
		hits, err := s.h.db.Search(ctx, s.q, sp.Session, s.before, chunk)
		if err != nil {
			return true, wireErr(err)
		}
		for _, hit := range hits {
			s.scanned++
			s.before = hit.DocID
			if hit.Offset <= sp.After || (sp.Upto != 0 && hit.Offset > sp.Upto) {
				continue
			}
			as := session
			if as == "" && !s.p.CanSee(hit.Session) {
				if as, err = s.readThrough(ctx, hit); err != nil {
					return true, err
				}
				if as == "" {
					continue // another's
				}
			}
			r, ok, err := s.h.searchResult(ctx, hit, s.titles)
			if err != nil {
				return true, err
			}
			if !ok {
				continue // deleted since it was found
			}
			if as != "" && r.Session != as {
				r.Session, r.Title = as, s.titleOf(ctx, as) // a fork's, read from its parent's rows
			}
			s.out.Results = append(s.out.Results, r)
			if len(s.out.Results) == s.limit {
				s.out.Next = strconv.FormatInt(s.before, 10)
				return true, nil
			}
		}
		if len(hits) < chunk {
			return false, nil // nothing older matches in this span
		}
	}
	s.out.Next = strconv.FormatInt(s.before, 10) // looked through searchScan: the next page goes on
	return true, nil
}

// readThrough names the session p may see that reads hit's row as one of
// its first events: a fork of hit's session (or of the session whose rows
// it holds, as the heir of a deleted parent); "" if none. The caller's
// forks' spans are read once a request, on the first hit of a session it
// may not see: one read of the store for each session it sees.
func (s *searching) readThrough(ctx context.Context, hit db.SearchHit) (string, error) {
	if s.through == nil {
		s.through = map[string][]readSpan{}
		for _, id := range s.p.Sees() {
			_, spans, err := s.h.db.SpansOf(ctx, id)
			if errors.Is(err, db.ErrNotFound) {
				continue
			}
			if err != nil {
				return "", wireErr(err)
			}
			for _, sp := range spans {
				if sp.Session != id {
					s.through[sp.Session] = append(s.through[sp.Session], readSpan{sp, id})
				}
			}
		}
	}
	for _, r := range s.through[hit.Session] {
		if hit.Offset > r.After && (r.Upto == 0 || hit.Offset <= r.Upto) {
			return r.as, nil
		}
	}
	return "", nil
}

// readSpan is a span of another session's rows that session as reads.
type readSpan struct {
	db.Span
	as string
}

// titleOf is a session's title, read once a request.
func (s *searching) titleOf(ctx context.Context, id string) string {
	if t, ok := s.titles[id]; ok {
		return t
	}
	if sess, err := s.h.db.Session(ctx, id); err == nil {
		s.titles[id] = sess.Title
	}
	return s.titles[id]
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
