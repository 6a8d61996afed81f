package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"albedo/wire"
)

// A pinned session is the person's alone: marked in their feed, held by
// its first page however old it is, listed by GET /v1/me/pins; at most
// wire.MaxPins. An archived session leaves the feed's pages and says so
// in a push, stays in GET /v1/sessions (marked) and in search, and comes
// back when unarchived; archiving is a settings event.
func TestPinsAndArchives(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	for _, id := range []string{"a", "b", "c"} {
		e.create(id)
		e.say(id, "words of "+id)
		e.settle(id, 1)
	}
	ann := e.member("ann", false)
	e.grant("a", "ann", wire.AccessRead)
	live := e.dialHello()
	feedOf(t, live, wire.Command{})

	if code, _ := e.do("PUT", "/v1/sessions/a/pin", nil, "", nil); code != http.StatusNoContent {
		t.Fatalf("pin: %d", code)
	}
	seen, gone := map[string]wire.FeedItem{}, map[string]bool{}
	feedUntil(t, live, seen, gone, func() bool { return seen["a"].Pinned })
	r := feedOf(t, e.dialHello(), wire.Command{Limit: 2})
	if got := ids(r.Sessions); !slices.Equal(got, []string{"c", "b", "a"}) || !r.Sessions[2].Pinned || r.Sessions[0].Pinned {
		t.Fatalf("the first page of 2 and the pin: %v %+v", got, r.Sessions)
	}
	var pins wire.Pins
	if code, _ := e.do("GET", "/v1/me/pins", nil, "", &pins); code != 200 || !slices.Equal(pins.Sessions, []string{"a"}) {
		t.Fatalf("pins: %d %+v", code, pins)
	}
	// Ann's are hers: a is not pinned for her.
	w := e.dialToken(ann.Token)
	w.Hello()
	if r := feedOf(t, w, wire.Command{}); len(r.Sessions) != 1 || r.Sessions[0].Pinned {
		t.Fatalf("ann's feed: %+v", r.Sessions)
	}

	code, s, _ := e.patch("b", `{"archived":true}`)
	if code != 200 || !s.Archived {
		t.Fatalf("archive: %d %+v", code, s)
	}
	feedUntil(t, live, seen, gone, func() bool { return seen["b"].Archived })
	if r := feedOf(t, e.dialHello(), wire.Command{}); slices.Contains(ids(r.Sessions), "b") {
		t.Fatalf("an archived session in the first page: %v", ids(r.Sessions))
	}
	var list wire.SessionList
	e.do("GET", "/v1/sessions", nil, "", &list)
	if i := slices.IndexFunc(list.Sessions, func(s wire.Session) bool { return s.ID == "b" }); i < 0 || !list.Sessions[i].Archived {
		t.Fatalf("the list: %+v", list.Sessions)
	}
	// The list of the archived alone, and of the others.
	for q, want := range map[string]bool{"true": true, "false": false} {
		var part wire.SessionList
		if code, _ := e.do("GET", "/v1/sessions?archived="+q, nil, "", &part); code != 200 || len(part.Sessions) == 0 ||
			slices.ContainsFunc(part.Sessions, func(s wire.Session) bool { return s.Archived != want }) || slices.ContainsFunc(part.Sessions, func(s wire.Session) bool { return s.ID == "b" }) != want {
			t.Fatalf("archived=%s: %d %+v", q, code, part.Sessions)
		}
	}
	var er wire.ErrorBody
	if code, _ := e.do("GET", "/v1/sessions?archived=yes", nil, "", &er); code != http.StatusBadRequest || !strings.Contains(er.Error.Message, "archived is true or false") {
		t.Fatalf("archived=yes: %d %+v", code, er)
	}
	if code, res, _ := e.find(nil, url.Values{"q": {"words"}}); code != 200 || !slices.ContainsFunc(res.Results, func(h wire.SearchResult) bool { return h.Session == "b" }) {
		t.Fatalf("search: %d %+v", code, res)
	}
	evs := e.events("b")
	if last := evs[len(evs)-1]; last.Type != wire.EventSettings || last.Archived == nil || !*last.Archived {
		t.Fatalf("the settings event: %+v", last)
	}
	if code, s, _ := e.patch("b", `{"archived":false}`); code != 200 || s.Archived {
		t.Fatalf("unarchive: %d %+v", code, s)
	}
	if r := feedOf(t, e.dialHello(), wire.Command{}); !slices.Contains(ids(r.Sessions), "b") {
		t.Fatalf("unarchived, not back: %v", ids(r.Sessions))
	}

	if code, _ := e.do("DELETE", "/v1/sessions/a/pin", nil, "", nil); code != http.StatusNoContent {
		t.Fatalf("unpin: %d", code)
	}
	feedUntil(t, live, seen, gone, func() bool { return !seen["a"].Pinned })
	for i := range wire.MaxPins {
		id := fmt.Sprintf("p%02d", i)
		e.create(id)
		if code, _ := e.do("PUT", "/v1/sessions/"+id+"/pin", nil, "", nil); code != http.StatusNoContent {
			t.Fatalf("pin %d: %d", i, code)
		}
	}
	if code, _ := e.do("PUT", "/v1/sessions/a/pin", nil, "", &er); code != http.StatusTooManyRequests || er.Error.Code != wire.CodeTooMany {
		t.Fatalf("a pin past the most: %d %+v", code, er)
	}
	link := e.link("a", wire.LinkCreate{})
	if code, _ := e.do("PUT", "/v1/sessions/a/pin", e.as(link.Token), "", nil); code != http.StatusForbidden {
		t.Fatalf("a link's viewer pins: %d", code)
	}
	if code, _ := e.do("PUT", "/v1/sessions/nosuch/pin", nil, "", nil); code != http.StatusNotFound {
		t.Fatalf("no such session: %d", code)
	}
}
