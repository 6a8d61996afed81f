package api

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"albedo/wire"
)

// say puts an input into session as the owner.
func (e *env) say(session, text string) {
	e.t.Helper()
	b, _ := json.Marshal(wire.Input{Text: text})
	if code, _ := e.do("PUT", "/v1/sessions/"+session+"/inputs/"+uuid.Must(uuid.NewV7()).String(), nil, string(b), nil); code != http.StatusAccepted {
		e.t.Fatalf("input to %s: %d", session, code)
	}
}

// find runs GET /v1/search with the query's parameters, as token.
func (e *env) find(hdr map[string]string, params url.Values) (int, wire.SearchResults, wire.ErrorBody) {
	e.t.Helper()
	var raw json.RawMessage
	code, _ := e.do("GET", "/v1/search?"+params.Encode(), hdr, "", &raw)
	var res wire.SearchResults
	var er wire.ErrorBody
	if code == http.StatusOK {
		json.Unmarshal(raw, &res)
	} else {
		json.Unmarshal(raw, &er)
	}
	return code, res, er
}

// GET /v1/search finds messages in several sessions, newest first, with
// their session's title, author and the match marked; pages by its
// cursor; finds in one session when asked; a link's token finds only its
// session's messages, a member only those of sessions they may read; a
// query that cannot be searched is a bad_request, never a 500.
func TestSearchAcrossSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	for _, id := range []string{"a", "b", "c"} {
		e.create(id)
	}
	e.say("a", "the kettle is on")
	e.say("b", "a kettle of fish")
	e.say("c", "no such thing here")
	e.say("c", "kettles everywhere")
	// The echoes are committed after the inputs' receipts: wait for them.
	e.settle("a", 1)
	e.settle("b", 1)
	e.settle("c", 2)

	code, res, _ := e.find(nil, url.Values{"q": {"kettle*"}})
	if code != 200 || len(res.Results) != 6 { // each input and its echo
		t.Fatalf("kettle*: %d %+v", code, res)
	}
	// Newest first by the index's numbering, which on SQLite is not
	// always the commit order across sessions (a message that waits in
	// the log is numbered at the fold, after later ones written straight;
	// docs/protocol.md, Search): c's echo is among the hits.
	var echo *wire.SearchResult
	for i, r := range res.Results {
		if strings.Contains(r.Text, "«kettles»") && r.Role == wire.RoleAssistant {
			echo = &res.Results[i]
		}
	}
	if echo == nil || echo.Session != "c" || echo.Title != "t" || echo.Type != wire.EventMessage || echo.At.IsZero() {
		t.Fatalf("c's echo: %+v", echo)
	}
	var users []wire.SearchResult
	for _, r := range res.Results {
		if r.Role == wire.RoleUser {
			users = append(users, r)
		}
	}
	if len(users) != 3 || users[0].Author == "" {
		t.Fatalf("the inputs found: %+v", users)
	}

	// Pages of two, through the cursor, add up to the whole.
	var paged []wire.SearchResult
	after := ""
	for range 10 {
		q := url.Values{"q": {"kettle*"}, "limit": {"2"}}
		if after != "" {
			q.Set("after", after)
		}
		code, page, _ := e.find(nil, q)
		if code != 200 {
			t.Fatalf("page after %q: %d", after, code)
		}
		paged = append(paged, page.Results...)
		if after = page.Next; after == "" {
			break
		}
	}
	if len(paged) != 6 || paged[5] != res.Results[5] {
		t.Fatalf("pages gave %d results", len(paged))
	}

	if _, in, _ := e.find(nil, url.Values{"q": {"kettle"}, "session": {"b"}}); len(in.Results) != 2 || in.Results[0].Session != "b" {
		t.Fatalf("in b: %+v", in)
	}
	link := e.link("a", wire.LinkCreate{})
	if _, mine, _ := e.find(e.as(link.Token), url.Values{"q": {"kettle*"}}); len(mine.Results) != 2 || mine.Results[0].Session != "a" {
		t.Fatalf("a link to a finds %+v", mine)
	}
	if code, _, er := e.find(e.as(link.Token), url.Values{"q": {"kettle"}, "session": {"b"}}); code != http.StatusForbidden || er.Error.Code != wire.CodeForbidden {
		t.Fatalf("a link to a, in b: %d %+v", code, er)
	}
	ann := e.member("ann", false)
	e.grant("b", "ann", wire.AccessRead)
	if _, hers, _ := e.find(e.as(ann.Token), url.Values{"q": {"kettle*"}}); len(hers.Results) != 2 || hers.Results[0].Session != "b" {
		t.Fatalf("ann, granted b, finds %+v", hers)
	}

	for _, bad := range []url.Values{
		{}, {"q": {""}}, {"q": {`"open`}}, {"q": {"-only"}}, {"q": {"a OR"}}, {"q": {strings.Repeat("x", 300)}},
		{"q": {"x"}, "limit": {"0"}}, {"q": {"x"}, "limit": {"101"}}, {"q": {"x"}, "after": {"nope"}}, {"q": {"x"}, "after": {"-4"}},
	} {
		if code, _, er := e.find(nil, bad); code != http.StatusBadRequest || er.Error.Code != wire.CodeBadRequest || er.Error.Message == "" {
			t.Errorf("%v: %d %+v", bad, code, er)
		}
	}
}
