package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"albedo/api/ws"
	"albedo/wire"
)

// token makes a bot (limited to sessions, if any) or a viewer token.
func (e *env) botToken(name string, sessions ...string) string {
	e.t.Helper()
	var out struct{ Token string }
	b, _ := json.Marshal(map[string]any{"name": name, "sessions": sessions})
	if code, _ := e.do("POST", "/v1/bots", nil, string(b), &out); code != 201 || out.Token == "" {
		e.t.Fatalf("add bot %s: %d", name, code)
	}
	return out.Token
}

func (e *env) viewerToken(session string) string {
	e.t.Helper()
	var out struct{ Token string }
	if code, _ := e.do("POST", "/v1/sessions/"+session+"/shares", nil, "", &out); code != 201 || out.Token == "" {
		e.t.Fatalf("share %s: %d", session, code)
	}
	return out.Token
}

func (e *env) as(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

// Every route echo serves has an entry in the permission table.
func TestEveryRouteHasPermissions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	for _, r := range e.srv.e.Routes() {
		if r.Path == "/healthz" || !strings.HasPrefix(r.Path, "/v1/") || strings.HasPrefix(r.Method, "echo_") {
			continue
		}
		if _, ok := permissions[r.Method+" "+r.Path]; !ok {
			t.Errorf("route %s %s has no permission entry", r.Method, r.Path)
		}
	}
}

// The role table: every HTTP route and websocket op, for each role,
// allowed or refused with forbidden.
func TestRoleTable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	e.create("del-owner")
	tokens := map[wire.TokenRole]string{
		wire.TokenOwner:  testToken,
		wire.TokenBot:    e.botToken("tablebot"),
		wire.TokenViewer: e.viewerToken("s"),
	}
	routes := []struct{ method, path, body string }{
		{"GET", "/v1/sessions", ""},
		{"POST", "/v1/sessions", `{}`},
		{"PUT", "/v1/sessions/%s-new", `{}`},
		{"GET", "/v1/sessions/s", ""},
		{"PATCH", "/v1/sessions/s", `{"title":"x"}`},
		{"DELETE", "/v1/sessions/del-%s", ""},
		{"GET", "/v1/sessions/s/events", ""},
		{"PUT", "/v1/sessions/s/inputs/" + uuid1, `{"text":"x"}`},
		{"GET", "/v1/sessions/s/inputs/" + uuid1, ""},
		{"POST", "/v1/sessions/s/interrupt", ""},
		{"GET", "/v1/sessions/s/status", ""},
		{"POST", "/v1/sessions/s/shares", ""},
		{"DELETE", "/v1/sessions/nosuch/shares", ""},
		{"GET", "/v1/providers", ""},
		{"GET", "/v1/bots", ""},
		{"POST", "/v1/bots", `{"name":"b-%s"}`},
		{"DELETE", "/v1/bots/nosuch", ""},
		{"GET", "/v1/tokens", ""},
		{"POST", "/v1/tokens", `{"role":"owner","name":"t-%s"}`},
		{"DELETE", "/v1/tokens/nosuch", ""},
		{"POST", "/v1/daemon/shutdown", ""},
	}
	routeKey := func(method, path string) string {
		// Map a concrete path back to its echo route.
		for _, r := range e.srv.e.Routes() {
			if r.Method == method && matchRoute(r.Path, path) {
				return method + " " + r.Path
			}
		}
		return method + " " + path
	}
	for _, role := range []wire.TokenRole{wire.TokenOwner, wire.TokenBot, wire.TokenViewer} {
		for _, rt := range routes {
			path := strings.ReplaceAll(rt.path, "%s", string(role))
			body := strings.ReplaceAll(rt.body, "%s", string(role))
			op := routeKey(rt.method, path)
			want := slices.Contains(permissions[op].Roles, role)
			t.Run(string(role)+" "+op, func(t *testing.T) {
				var raw json.RawMessage
				code, _ := e.do(rt.method, path, e.as(tokens[role]), body, &raw)
				var eb wire.ErrorBody
				if code == http.StatusForbidden {
					_ = json.Unmarshal(raw, &eb)
				}
				refused := code == http.StatusForbidden && eb.Error != nil && eb.Error.Code == wire.CodeForbidden
				if want == refused {
					t.Fatalf("%s %s as %s: %d %+v (allowed: %v)", rt.method, path, role, code, eb.Error, want)
				}
			})
		}
	}

	ops := []wire.Command{
		{Op: wire.OpPing},
		{Op: wire.OpSub, Session: "s"},
		{Op: wire.OpUnsub, Session: "s"},
		{Op: wire.OpSend, Session: "s", InputID: uuid1[:35] + "7", Text: "x"},
		{Op: wire.OpInterrupt, Session: "s"},
		{Op: wire.OpPost, Session: "s", InputID: uuid1[:35] + "8", Text: "x"},
		{Op: wire.OpServe},
		{Op: wire.OpReply, TurnID: "nope", Text: "x"},
		{Op: wire.OpTyping, Session: "s"},
		{Op: wire.OpPeople, Session: "s"},
	}
	for _, role := range []wire.TokenRole{wire.TokenOwner, wire.TokenBot, wire.TokenViewer} {
		w := e.dialToken(tokens[role])
		w.Hello()
		for i, cmd := range ops {
			cmd.ID = int64(100 + i)
			want := slices.Contains(ws.Roles(cmd.Op), role)
			w.Send(cmd)
			r := w.Reply(cmd.ID)
			refused := !r.OK && r.Error != nil && r.Error.Code == wire.CodeForbidden
			if want == refused {
				t.Errorf("ws %s as %s: %+v (allowed: %v)", cmd.Op, role, r.Error, want)
			}
		}
	}
}

func matchRoute(route, path string) bool {
	rs, ps := strings.Split(route, "/"), strings.Split(path, "/")
	if len(rs) != len(ps) {
		return false
	}
	for i := range rs {
		if !strings.HasPrefix(rs[i], ":") && rs[i] != ps[i] {
			return false
		}
	}
	return true
}

// dialToken opens a websocket that sends its token in hello.
func (e *env) dialToken(token string) *wsClient {
	e.t.Helper()
	w := e.dial(false)
	w.Token = token
	return w
}

// Tokens limited to sessions: a viewer sees its session and nothing else,
// a bot limited to a list too.
func TestTokenScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("mine")
	e.create("other")
	viewer := e.viewerToken("mine")
	bot := e.botToken("scoped", "mine")
	for _, tok := range []string{viewer, bot} {
		if code, _ := e.do("GET", "/v1/sessions/mine/events", e.as(tok), "", nil); code != 200 {
			t.Fatalf("own session: %d", code)
		}
		var eb wire.ErrorBody
		if code, _ := e.do("GET", "/v1/sessions/other/events", e.as(tok), "", &eb); code != 403 || eb.Error.Code != wire.CodeForbidden {
			t.Fatalf("other session: %d %+v", code, eb.Error)
		}
	}
	for name, tok := range map[string]string{"a scoped bot": bot, "a viewer": viewer} {
		var list wire.SessionList
		e.do("GET", "/v1/sessions", e.as(tok), "", &list)
		if len(list.Sessions) != 1 || list.Sessions[0].ID != "mine" {
			t.Fatalf("%s lists %+v", name, list.Sessions)
		}
	}
	// hello with two subs: the one outside the scope is refused alone.
	w := e.dialToken(viewer)
	r := w.Hello(wire.Sub{Session: "mine"}, wire.Sub{Session: "other"})
	if !r.Subs[0].OK || r.Subs[1].OK || r.Subs[1].Error.Code != wire.CodeForbidden {
		t.Fatalf("hello subs %+v", r.Subs)
	}
	if r.Role != wire.TokenViewer {
		t.Fatalf("hello says the role is %q, want viewer", r.Role)
	}
	if r := e.dial(true).Hello(); r.Role != wire.TokenOwner {
		t.Fatalf("the owner's hello says %q", r.Role)
	}
	w.Send(wire.Command{ID: 7, Op: wire.OpSub, Session: "other"})
	if rep := w.Reply(7); rep.OK || rep.Error.Code != wire.CodeForbidden {
		t.Fatalf("sub other: %+v", rep)
	}

	// Refusals change nothing that is stored.
	before := map[string][]json.RawMessage{"mine": e.history("mine"), "other": e.history("other")}
	var s0 wire.Session
	e.do("GET", "/v1/sessions/mine", nil, "", &s0)
	refusals := []struct {
		tok, method, path, body string
	}{
		{viewer, "PUT", "/v1/sessions/mine/inputs/" + uuid1, `{"text":"x"}`},
		{viewer, "PATCH", "/v1/sessions/mine", `{"title":"x"}`},
		{viewer, "DELETE", "/v1/sessions/mine", ""},
		{bot, "PUT", "/v1/sessions/other/inputs/" + uuid1, `{"text":"x"}`},
		{bot, "PATCH", "/v1/sessions/mine", `{"title":"x"}`},
		{bot, "DELETE", "/v1/sessions/mine", ""},
	}
	for _, r := range refusals {
		hdr := e.as(r.tok)
		hdr["If-Match"] = s0.ETag
		if code, _ := e.do(r.method, r.path, hdr, r.body, nil); code != 403 {
			t.Fatalf("%s %s: %d, want 403", r.method, r.path, code)
		}
	}
	b := e.dialToken(bot)
	b.Hello()
	b.Send(wire.Command{ID: 3, Op: wire.OpPost, Session: "other", InputID: uuid1, Text: "x"})
	if rep := b.Reply(3); rep.OK || rep.Error.Code != wire.CodeForbidden {
		t.Fatalf("post to another session: %+v", rep)
	}
	w.Send(wire.Command{ID: 8, Op: wire.OpSend, Session: "mine", InputID: uuid1, Text: "x"})
	if rep := w.Reply(8); rep.OK || rep.Error.Code != wire.CodeForbidden {
		t.Fatalf("viewer send: %+v", rep)
	}
	for id, evs := range before {
		if got := e.history(id); len(got) != len(evs) {
			t.Fatalf("%s: %d events after refusals, %d before", id, len(got), len(evs))
		}
	}
	var s1 wire.Session
	e.do("GET", "/v1/sessions/mine", nil, "", &s1)
	if s1.ETag != s0.ETag || s1.Title != s0.Title {
		t.Fatalf("settings changed by a refusal: %+v", s1)
	}
}

// A revoked token is refused at once, and its open connections are closed
// with 4401.
func TestRevokedTokenRefusedAndClosed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	bot := e.botToken("gone")
	viewer := e.viewerToken("s")
	wb, wv := e.dialToken(bot), e.dialToken(viewer)
	wb.Hello()
	wv.Hello(wire.Sub{Session: "s"})
	if code, _ := e.do("DELETE", "/v1/bots/gone", nil, "", nil); code != 204 {
		t.Fatalf("rm bot: %d", code)
	}
	if code := wb.Closed(); code != ws.StatusBadToken {
		t.Fatalf("bot connection closed with %d, want 4401", code)
	}
	if code, _ := e.do("GET", "/v1/sessions/s", e.as(bot), "", nil); code != 401 {
		t.Fatalf("revoked bot token: %d", code)
	}
	if code, _ := e.do("DELETE", "/v1/sessions/s/shares", nil, "", nil); code != 204 {
		t.Fatalf("unshare: %d", code)
	}
	if code := wv.Closed(); code != ws.StatusBadToken {
		t.Fatalf("viewer connection closed with %d, want 4401", code)
	}
	w := e.dialToken(viewer)
	w.Send(wire.Command{ID: 1, Op: wire.OpHello, Token: viewer})
	if code := w.Closed(); code != ws.StatusBadToken {
		t.Fatalf("hello with a revoked token: %d", code)
	}
	if code, _ := e.do("DELETE", "/v1/bots/gone", nil, "", nil); code != 404 {
		t.Fatalf("rm a missing bot: %d", code)
	}
	var eb wire.ErrorBody
	if code, _ := e.do("POST", "/v1/bots", nil, `{"name":"Bad Name"}`, &eb); code != 400 {
		t.Fatalf("bad bot name: %d", code)
	}
	e.botToken("dup")
	if code, _ := e.do("POST", "/v1/bots", nil, `{"name":"dup"}`, &eb); code != 409 {
		t.Fatalf("duplicate bot: %d", code)
	}
}
