package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"albedo/hub"
	"albedo/wire"
)

// link makes a link to session as the owner.
func (e *env) link(session string, req wire.LinkCreate) wire.LinkCreated {
	e.t.Helper()
	var out wire.LinkCreated
	b, _ := json.Marshal(req)
	code, hdr := e.do("POST", "/v1/sessions/"+session+"/shares", nil, string(b), &out)
	if code != http.StatusCreated || out.Token == "" {
		e.t.Fatalf("share %s %+v: %d", session, req, code)
	}
	if hdr.Get("Cache-Control") != "no-store" {
		e.t.Errorf("a link's reply has Cache-Control %q", hdr.Get("Cache-Control"))
	}
	return out
}

func TestLinksListRevokeAndRefuseBadOnes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	read := e.link("s", wire.LinkCreate{})
	if read.Access != wire.AccessRead || !strings.HasPrefix(read.Label, "link-") || read.ExpiresAt != "" {
		t.Fatalf("a plain link: %+v", read.Link)
	}
	write := e.link("s", wire.LinkCreate{Access: wire.AccessWrite, Label: "class", ExpiresIn: "24h"})
	if write.Access != wire.AccessWrite || write.Label != "class" || write.ExpiresAt == "" {
		t.Fatalf("a write link: %+v", write.Link)
	}
	for body, want := range map[string]int{
		`{"label":"class"}`:        http.StatusConflict,
		`{"label":"a b"}`:          http.StatusBadRequest,
		`{"access":"creator"}`:     http.StatusBadRequest,
		`{"expires_in":"forever"}`: http.StatusBadRequest,
		`{"expires_in":"-1h"}`:     http.StatusBadRequest,
		`{"expires_in":"9000h"}`:   http.StatusBadRequest,
	} {
		if code, _ := e.do("POST", "/v1/sessions/s/shares", nil, body, nil); code != want {
			t.Errorf("share %s: %d, want %d", body, code, want)
		}
	}
	// Used once, the read link says when.
	w := e.dialToken(read.Token)
	w.Hello(wire.Sub{Session: "s"})
	var list struct{ Links []wire.Link }
	if code, _ := e.do("GET", "/v1/sessions/s/shares", nil, "", &list); code != 200 || len(list.Links) != 2 {
		t.Fatalf("GET shares: %d %+v", code, list)
	}
	raw, _ := json.Marshal(list)
	if strings.Contains(string(raw), read.Token) || strings.Contains(string(raw), "token") {
		t.Fatalf("the list shows a token: %s", raw)
	}
	if list.Links[0].Label != read.Label || list.Links[0].LastUsed == "" || list.Links[1].LastUsed != "" {
		t.Fatalf("links: %+v", list.Links)
	}
	if code, _ := e.do("DELETE", "/v1/sessions/s/shares/"+read.Label, nil, "", nil); code != http.StatusNoContent {
		t.Fatalf("unlink: %d", code)
	}
	if ce := w.ClosedWith(); ce.Code != wire.CloseBadToken {
		t.Fatalf("the revoked link's websocket: %+v", ce)
	}
	if code, _ := e.do("DELETE", "/v1/sessions/s/shares/"+read.Label, nil, "", nil); code != http.StatusNotFound {
		t.Fatalf("unlink again: %d", code)
	}
	if code, _ := e.do("GET", "/v1/sessions/s", e.as(write.Token), "", nil); code != 200 {
		t.Fatalf("the other link still works: %d", code)
	}
}

// A write link's holder writes under the name they pick, as a guest, in
// its session only.
func TestGuestsWriteUnderTheirName(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	e.create("other")
	g := e.link("s", wire.LinkCreate{Access: wire.AccessWrite})
	w := e.dialToken(g.Token)
	w.Send(wire.Command{ID: 1, Op: wire.OpHello, Token: g.Token, Name: "Ann Lee", Subs: []wire.Sub{{Session: "s"}, {Session: "other"}}})
	r := w.Reply(1)
	if !r.OK || r.Role != wire.TokenGuest || !r.Subs[0].OK || r.Subs[1].OK {
		t.Fatalf("a guest's hello: %+v", r)
	}
	p := w.Next(func(f wire.Frame) bool { return f.Op == wire.PushPresence })
	if len(p.Presence.People) != 1 || p.Presence.People[0].Name != "Ann Lee" || p.Presence.People[0].Role != wire.TokenGuest {
		t.Fatalf("presence of a guest: %+v", p.Presence.People)
	}
	w.Send(wire.Command{ID: 2, Op: wire.OpSend, Session: "s", InputID: newUUID(), Text: "hi from a guest"})
	if r := w.Reply(2); !r.OK {
		t.Fatalf("a guest's send: %+v", r.Error)
	}
	w.Send(wire.Command{ID: 3, Op: wire.OpTyping, Session: "s"})
	if r := w.Reply(3); !r.OK {
		t.Fatalf("a guest's typing: %+v", r.Error)
	}
	var author, id string
	for _, ev := range e.settle("s", 1) {
		if ev.Role == wire.RoleUser {
			author, id = ev.Author, ev.AuthorID
		}
	}
	if author != "Ann Lee" || !strings.HasPrefix(id, "guest:") || !strings.HasSuffix(id, ":Ann Lee") {
		t.Fatalf("a guest's message: author %q, id %q", author, id)
	}
	for _, bad := range []string{strings.Repeat("x", wire.MaxGuestName+1), "tab\there"} {
		w := e.dialToken(g.Token)
		w.Send(wire.Command{ID: 1, Op: wire.OpHello, Token: g.Token, Name: bad})
		if r := w.Reply(1); r.OK || r.Error.Code != wire.CodeBadRequest {
			t.Errorf("a guest named %q: %+v", bad, r)
		}
	}
}

// An expired link is refused, and its connections are closed saying so.
func TestExpiredLinkIsRefusedAndCut(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	l := e.link("s", wire.LinkCreate{ExpiresIn: "1s"})
	w := e.dialToken(l.Token)
	w.Hello(wire.Sub{Session: "s"})
	if ce := w.ClosedWith(); ce.Code != wire.CloseBadToken || ce.Reason != LinkExpired {
		t.Fatalf("the expired link's websocket: %+v", ce)
	}
	var eb wire.ErrorBody
	if code, _ := e.do("GET", "/v1/sessions/s", e.as(l.Token), "", &eb); code != http.StatusUnauthorized || !strings.Contains(eb.Error.Message, "expired") {
		t.Fatalf("an expired link over HTTP: %d %+v", code, eb.Error)
	}
}

// A guest may not go by the name of someone of the home: a member's, a
// bot's, an owner token's (without regard to case), the daemon's own, or
// one that reads as a bot. Both clients and the model show an author's
// name alone, so such a guest would pass for them. Another name is taken.
func TestGuestMayNotPassForSomeoneOfTheHome(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	e.member("root", true)
	e.botToken("poster")
	// The home's own member has no token of its own (daemon.json's).
	if _, err := e.hub.EnsureMember(context.Background(), hub.Runner{Name: "homer"}); err != nil {
		t.Fatal(err)
	}
	g := e.link("s", wire.LinkCreate{Access: wire.AccessWrite})
	for _, name := range []string{"root", "ROOT", " Root ", "poster", "bot:x", "Bot:poster", "albedo", "owner", "Homer"} {
		w := e.dialToken(g.Token)
		w.Send(wire.Command{ID: 1, Op: wire.OpHello, Token: g.Token, Name: name})
		if r := w.Reply(1); r.OK || r.Error.Code != wire.CodeBadRequest || !strings.Contains(r.Error.Message, strings.TrimSpace(name)) {
			t.Fatalf("a guest named %q: %+v", name, r)
		}
		if code := w.Closed(); code != websocket.StatusPolicyViolation {
			t.Fatalf("a guest named %q: closed with %d, want 1008", name, code)
		}
	}
	w := e.dialToken(g.Token)
	w.Send(wire.Command{ID: 1, Op: wire.OpHello, Token: g.Token, Name: "root's friend"})
	if r := w.Reply(1); !r.OK {
		t.Fatalf("a guest named \"root's friend\": %+v", r.Error)
	}
}
