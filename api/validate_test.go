package api

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"albedo/api/ws"
	"albedo/hub/access"
	"albedo/wire"
)

// U+0000 in any text field is a 400 bad_request that names the field —
// never a 500 — and changes nothing stored (docs/protocol.md, "Text").
func TestNULInATextFieldIsABadRequestNamingIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	var s wire.Session
	e.do("GET", "/v1/sessions/s", nil, "", &s)
	before := e.history("s")
	patch := map[string]string{"If-Match": s.ETag}
	create := map[string]string{"If-None-Match": "*"}
	cases := []struct {
		name, method, path string
		hdr                map[string]string
		body, field        string
	}{
		{"create title", "POST", "/v1/sessions", nil, `{"title":"a\u0000b"}`, "title"},
		{"create model", "POST", "/v1/sessions", nil, `{"model":"m\u0000"}`, "model"},
		{"create workspace", "POST", "/v1/sessions", nil, `{"workspace":"\u0000"}`, "workspace"},
		{"create effort", "POST", "/v1/sessions", nil, `{"effort":"hi\u0000gh"}`, "effort"},
		{"create provider", "POST", "/v1/sessions", nil, `{"provider":"echo\u0000"}`, "provider"},
		{"put title", "PUT", "/v1/sessions/s2", create, `{"title":"a\u0000b"}`, "title"},
		{"patch title", "PATCH", "/v1/sessions/s", patch, `{"title":"a\u0000b"}`, "title"},
		{"patch model", "PATCH", "/v1/sessions/s", patch, `{"model":"\u0000"}`, "model"},
		{"patch effort", "PATCH", "/v1/sessions/s", patch, `{"effort":"\u0000"}`, "effort"},
		{"input text", "PUT", "/v1/sessions/s/inputs/" + uuid1, nil, `{"text":"a\u0000b"}`, "text"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body wire.ErrorBody
			code, _ := e.do(tc.method, tc.path, tc.hdr, tc.body, &body)
			if code != 400 || body.Error == nil || body.Error.Code != wire.CodeBadRequest || !strings.Contains(body.Error.Message, tc.field) {
				t.Fatalf("%s %s %s: %d %+v, want 400 bad_request naming %q", tc.method, tc.path, tc.body, code, body.Error, tc.field)
			}
		})
	}
	var after wire.Session
	e.do("GET", "/v1/sessions/s", nil, "", &after)
	if after.ETag != s.ETag {
		t.Fatalf("session changed: %+v -> %+v", s, after)
	}
	if got := e.history("s"); !reflect.DeepEqual(got, before) {
		t.Fatalf("events changed:\n%s\n%s", before, got)
	}
	var list wire.SessionList
	e.do("GET", "/v1/sessions", nil, "", &list)
	if len(list.Sessions) != 1 {
		t.Fatalf("%d sessions after refused creates, want 1", len(list.Sessions))
	}
}

// A short text field past its byte limit is a 413 too_large that names
// the field and its limit, before anything is stored; one at its limit is
// taken. A member could otherwise store titles of megabytes that every
// list and feed page then repeats.
func TestTextFieldOverItsLimitIsTooLarge(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	var s wire.Session
	e.do("GET", "/v1/sessions/s", nil, "", &s)
	patch := map[string]string{"If-Match": s.ETag}
	create := map[string]string{"If-None-Match": "*"}
	over := func(field string, limit int, path string) string {
		at := ""
		if strings.HasSuffix(path, "/fork") {
			at = `"at":0,` // a fork's at is required
		}
		return `{` + at + `"` + field + `":"` + strings.Repeat("x", limit+1) + `"}`
	}
	cases := []struct {
		name, method, path string
		hdr                map[string]string
		field              string
		limit              int
	}{
		{"create title", "POST", "/v1/sessions", nil, "title", wire.MaxTitleBytes},
		{"create workspace", "POST", "/v1/sessions", nil, "workspace", wire.MaxWorkspaceBytes},
		{"create model", "POST", "/v1/sessions", nil, "model", wire.MaxModelBytes},
		{"create provider", "POST", "/v1/sessions", nil, "provider", wire.MaxNameBytes},
		{"put title", "PUT", "/v1/sessions/s2", create, "title", wire.MaxTitleBytes},
		{"patch title", "PATCH", "/v1/sessions/s", patch, "title", wire.MaxTitleBytes},
		{"patch model", "PATCH", "/v1/sessions/s", patch, "model", wire.MaxModelBytes},
		{"patch system", "PATCH", "/v1/sessions/s", patch, "system", wire.MaxSystemBytes},
		{"fork title", "POST", "/v1/sessions/s/fork", nil, "title", wire.MaxTitleBytes},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body wire.ErrorBody
			code, _ := e.do(tc.method, tc.path, tc.hdr, over(tc.field, tc.limit, tc.path), &body)
			if code != 413 || body.Error == nil || body.Error.Code != wire.CodeTooLarge ||
				!strings.Contains(body.Error.Message, tc.field) || !strings.Contains(body.Error.Message, fmt.Sprint(tc.limit)) {
				t.Fatalf("%s %s with %s of %d bytes: %d %+v, want 413 too_large naming it and %d", tc.method, tc.path, tc.field, tc.limit+1, code, body.Error, tc.limit)
			}
		})
	}
	var after wire.Session
	e.do("GET", "/v1/sessions/s", nil, "", &after)
	if after.ETag != s.ETag {
		t.Fatalf("session changed: %+v -> %+v", s, after)
	}
	var list wire.SessionList
	e.do("GET", "/v1/sessions", nil, "", &list)
	if len(list.Sessions) != 1 {
		t.Fatalf("%d sessions after refused creates, want 1", len(list.Sessions))
	}
	title := strings.Repeat("é", wire.MaxTitleBytes/2) // at the limit, in bytes
	var made wire.Session
	if code, _ := e.do("POST", "/v1/sessions", nil, `{"title":"`+title+`"}`, &made); code != 201 || made.Title != title {
		t.Fatalf("a title at its limit: %d %q", code, made.Title)
	}
}

// One UUID written another way (upper case, braces, urn:uuid:) is not a
// second input: only the canonical form is accepted, with a clear error.
func TestInputIDMustBeCanonical(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	for _, id := range []string{strings.ToUpper(uuid1), "{" + uuid1 + "}", "urn:uuid:" + uuid1, strings.ReplaceAll(uuid1, "-", "")} {
		var body wire.ErrorBody
		code, _ := e.do("PUT", "/v1/sessions/s/inputs/"+id, nil, `{"text":"x"}`, &body)
		if code != 400 || body.Error == nil || body.Error.Code != wire.CodeBadRequest || !strings.Contains(body.Error.Message, "canonical") {
			t.Fatalf("input id %q: %d %+v, want 400 bad_request about the canonical form", id, code, body.Error)
		}
	}
	if evs := e.history("s"); len(evs) != 0 {
		t.Fatalf("%d events after refused inputs", len(evs))
	}
	var r wire.Receipt
	if code, _ := e.do("PUT", "/v1/sessions/s/inputs/"+uuid1, nil, `{"text":"x"}`, &r); code != 202 {
		t.Fatalf("the canonical id: %d", code)
	}
}

// Refusals speak to people: the role with its article, and what was
// refused in words, never a route or an op's name.
func TestRefusalsReadWell(t *testing.T) {
	t.Parallel()
	cases := map[string]string{"owner": "an owner", "bot": "a bot", "viewer": "a read link", "guest": "a guest of a link"}
	for role, want := range cases {
		got := access.Principal{Role: wire.TokenRole(role)}.Authorize(access.Rule{}, "do x", "")
		if got == nil || got.Message != want+" may not do x" {
			t.Errorf("a refusal of a %s: %+v, want %q", role, got, want+" may not do x")
		}
	}
	for route := range permissions {
		if doing[route] == "" {
			t.Errorf("route %s has no words for its refusals", route)
		}
	}
	e := newEnv(t, Options{})
	w := e.dial(true)
	w.Hello()
	w.Send(wire.Command{ID: 2, Op: wire.OpServe})
	if r := w.Reply(2); r.Error == nil || r.Error.Message != "an owner may not serve as a bot" {
		t.Fatalf("serve as the owner: %+v", r.Error)
	}
	e.create("s")
	ann := e.member("ann", false)
	e.grant("s", "ann", wire.AccessWrite)
	var er wire.ErrorBody
	if code, _ := e.do("DELETE", "/v1/sessions/s", e.as(ann.Token), "", &er); code != http.StatusForbidden ||
		er.Error.Message != "only an admin or the session's creator may delete the session" {
		t.Fatalf("a member deletes: %d %+v", code, er)
	}
}

// Tokens scoped to a session end with it: deleting the session revokes a
// token of that session alone (its connections close with 4401) and takes
// the session off a bot's list of several (its connections close to come
// back with the new scope), so a session made again under the same id is
// none of theirs.
func TestScopedTokensDieWithTheirSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	e.create("t")
	viewer, onlyS, both := e.viewerToken("s"), e.botToken("only-s", "s"), e.botToken("both", "s", "t")
	wv, wb := e.dialToken(viewer), e.dialToken(both)
	wv.Hello(wire.Sub{Session: "s"})
	wb.Hello(wire.Sub{Session: "t"})

	if code, _ := e.do("DELETE", "/v1/sessions/s", nil, "", nil); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if code := wv.Closed(); code != ws.StatusBadToken {
		t.Fatalf("the viewer's websocket closed with %d, want 4401", code)
	}
	if code := wb.Closed(); code == ws.StatusBadToken {
		t.Fatalf("the narrowed bot's websocket closed with 4401: its token still works")
	}
	if code, _ := e.do("PUT", "/v1/sessions/s", map[string]string{"If-None-Match": "*"}, `{"title":"new"}`, nil); code != 201 {
		t.Fatalf("make s again: %d", code)
	}
	cases := []struct {
		name, token, path string
		want              int
	}{
		{"viewer of the old s", viewer, "/v1/sessions/s", 401},
		{"bot of the old s alone", onlyS, "/v1/sessions/s", 401},
		{"bot of s and t, on the new s", both, "/v1/sessions/s", 403},
		{"bot of s and t, on t", both, "/v1/sessions/t", 200},
	}
	for _, tc := range cases {
		if code, _ := e.do("GET", tc.path, e.as(tc.token), "", nil); code != tc.want {
			t.Errorf("%s: GET %s = %d, want %d", tc.name, tc.path, code, tc.want)
		}
	}
}

// Two commands written back to back on one line, as a clumsy client does,
// each get their reply with their own id, not one error with id 0; what
// cannot be read after them gets an error of its own.
func TestCommandsBackToBackGetTheirOwnReplies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	w := e.dial(true)
	w.Hello()
	w.Send(`{"id":31,"op":"ping"}{"id":32,"op":"ping"} {"id":33,"op":"ping"}` + "\n" + `{"id":34,"op":"ping"} garbage`)
	for _, id := range []int64{31, 32, 33, 34} {
		if r := w.Reply(id); !r.OK {
			t.Fatalf("reply %d: %+v", id, r)
		}
	}
	if r := w.Reply(0); r.OK || r.Error == nil || r.Error.Code != wire.CodeBadRequest {
		t.Fatalf("the garbage: %+v", r)
	}
}

// An effort that is not one of wire.Efforts is refused when a session is
// made and when it is patched, naming the ones there are; each of those,
// and empty (none set), is taken.
func TestEffortIsOneOfTheLevels(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	var s wire.Session
	e.do("GET", "/v1/sessions/s", nil, "", &s)
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/v1/sessions", `{"effort":"bogus"}`},
		{"PATCH", "/v1/sessions/s", `{"effort":"HIGH"}`},
	} {
		var body wire.ErrorBody
		code, _ := e.do(tc.method, tc.path, map[string]string{"If-Match": s.ETag}, tc.body, &body)
		if code != 400 || body.Error == nil || body.Error.Code != wire.CodeBadRequest || !strings.Contains(body.Error.Message, "minimal, low, medium, high") {
			t.Fatalf("%s %s: %d %+v", tc.method, tc.body, code, body.Error)
		}
	}
	for _, level := range append([]string{""}, wire.Efforts...) {
		code, _ := e.do("PATCH", "/v1/sessions/s", map[string]string{"If-Match": s.ETag}, `{"effort":"`+level+`"}`, &s)
		if code != 200 || s.Effort != level {
			t.Fatalf("effort %q: %d, session %+v", level, code, s)
		}
	}
}
