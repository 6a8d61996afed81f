package api

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"testing"

	"albedo/hub"
	"albedo/wire"
)

// TestSessionListPages: the list comes a page at a time, none larger than
// hub.MaxSessionsPage however large a limit is asked for, and the pages'
// next cursors walk every session once, in the order of their ids.
func TestSessionListPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	const n = hub.MaxSessionsPage + 5
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				if _, _, err := e.hub.CreateSession(context.Background(), fmt.Sprintf("s%04d", i), wire.SessionCreate{}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	var first wire.SessionList
	if code, _ := e.do("GET", "/v1/sessions?limit=5000", nil, "", &first); code != 200 || len(first.Sessions) != hub.MaxSessionsPage || first.Next == "" {
		t.Fatalf("limit=5000: %d, %d sessions, next %q", code, len(first.Sessions), first.Next)
	}
	var plain wire.SessionList
	if e.do("GET", "/v1/sessions", nil, "", &plain); len(plain.Sessions) != 100 || plain.Next == "" {
		t.Fatalf("no limit: %d sessions, next %q; want the default 100 and a next", len(plain.Sessions), plain.Next)
	}

	var walked []string
	pages := 0
	for after := ""; ; pages++ {
		var p wire.SessionList
		if code, _ := e.do("GET", "/v1/sessions?limit=300&after="+url.QueryEscape(after), nil, "", &p); code != 200 || len(p.Sessions) > 300 {
			t.Fatalf("page after %q: %d, %d sessions", after, code, len(p.Sessions))
		}
		for _, s := range p.Sessions {
			walked = append(walked, s.ID)
		}
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	if !slices.IsSorted(walked) {
		t.Fatalf("the walk is not in the order of the ids")
	}
	if pages != 3 || len(walked) != n {
		t.Fatalf("walked %d sessions in %d pages after the first, want %d in 3", len(walked), pages, n)
	}
	for i, s := range first.Sessions {
		if walked[i] != s.ID {
			t.Fatalf("walk's %dth session %s, the first page's %s", i, walked[i], s.ID)
		}
	}
	sorted := slices.Clone(walked)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != n {
		t.Fatalf("the walk listed a session twice")
	}
}

// TestSessionListBadPage: a limit or a cursor that is not one is a
// bad_request, never a 500.
func TestSessionListBadPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("a")
	b64 := base64.RawURLEncoding.EncodeToString
	for _, q := range []string{
		"limit=0", "limit=-1", "limit=x", "limit=99999999999999999999",
		"after=" + url.QueryEscape("not base64!"),
		"after=" + b64([]byte("../a")),
		"after=" + b64([]byte("a b")),
		"after=" + url.QueryEscape(b64([]byte("a"))+"="),
	} {
		var eb wire.ErrorBody
		if code, _ := e.do("GET", "/v1/sessions?"+q, nil, "", &eb); code != 400 || eb.Error.Code != wire.CodeBadRequest {
			t.Errorf("%s: %d %+v, want 400 bad_request", q, code, eb.Error)
		}
	}
	var p wire.SessionList
	if code, _ := e.do("GET", "/v1/sessions?after="+b64([]byte("0")), nil, "", &p); code != 200 || len(p.Sessions) != 1 {
		t.Fatalf("a cursor of this form: %d %+v", code, p)
	}
}

// TestScopedTokenPagesItsSessions: a bot limited to three sessions pages
// through those three only.
func TestScopedTokenPagesItsSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		e.create(id)
	}
	tok := e.botToken("three", "b", "d", "e")
	var got []string
	after := ""
	for range 4 {
		var p wire.SessionList
		if code, _ := e.do("GET", "/v1/sessions?limit=2&after="+url.QueryEscape(after), e.as(tok), "", &p); code != 200 {
			t.Fatalf("page: %d", code)
		}
		if p.Next != "" && len(p.Sessions) != 2 {
			t.Fatalf("a page of %d before the last, want 2", len(p.Sessions))
		}
		for _, s := range p.Sessions {
			got = append(got, s.ID)
		}
		if after = p.Next; after == "" {
			break
		}
	}
	if !slices.Equal(got, []string{"b", "d", "e"}) {
		t.Fatalf("a bot of b, d and e listed %v", got)
	}
}
