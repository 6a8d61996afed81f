package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"albedo/hub"
	"albedo/wire"
)

// member adds a member and returns their invite token.
func (e *env) member(name string, admin bool) wire.MemberCreated {
	e.t.Helper()
	var out wire.MemberCreated
	b, _ := json.Marshal(wire.MemberCreate{Name: name, Admin: admin})
	code, hdr := e.do("POST", "/v1/members", nil, string(b), &out)
	if code != http.StatusCreated || out.Token == "" {
		e.t.Fatalf("add member %s: %d", name, code)
	}
	if hdr.Get("Cache-Control") != "no-store" {
		e.t.Errorf("a reply with a token has Cache-Control %q", hdr.Get("Cache-Control"))
	}
	return out
}

// grant gives name access to session, as the owner.
func (e *env) grant(session, name string, access wire.Access) {
	e.t.Helper()
	if code, _ := e.do("PUT", "/v1/sessions/"+session+"/grants/"+name, nil, `{"access":"`+string(access)+`"}`, nil); code != http.StatusNoContent {
		e.t.Fatalf("grant %s %s on %s: %d", access, name, session, code)
	}
}

// answerAll sets session to answer every message, as a granted
// session's tests that ask its model without a mention need.
func (e *env) answerAll(session string) {
	e.t.Helper()
	var s wire.Session
	e.do("GET", "/v1/sessions/"+session, nil, "", &s)
	if code, _ := e.do("PATCH", "/v1/sessions/"+session, map[string]string{"If-Match": s.ETag}, `{"respond":"always"}`, nil); code != http.StatusOK {
		e.t.Fatalf("respond always on %s: %d", session, code)
	}
}

func TestMembersAddListRemove(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	ann := e.member("ann", false)
	if !strings.Contains(ann.URL, "/#token="+ann.Token) || ann.Admin {
		t.Fatalf("the invite: %+v", ann)
	}
	for body, want := range map[string]int{
		`{"name":"ann"}`:     http.StatusConflict,
		`{"name":"Ann Lee"}`: http.StatusBadRequest,
		`{"name":""}`:        http.StatusBadRequest,
		`{"name":7}`:         http.StatusBadRequest,
	} {
		if code, _ := e.do("POST", "/v1/members", nil, body, nil); code != want {
			t.Errorf("POST /v1/members %s: %d, want %d", body, code, want)
		}
	}
	var list struct{ Members []wire.Member }
	if code, _ := e.do("GET", "/v1/members", nil, "", &list); code != 200 || len(list.Members) != 1 || list.Members[0].Name != "ann" {
		t.Fatalf("GET /v1/members: %d %+v", code, list)
	}
	// Only admins manage members.
	if code, _ := e.do("GET", "/v1/members", e.as(ann.Token), "", nil); code != http.StatusForbidden {
		t.Errorf("a member lists members: %d", code)
	}
	if code, _ := e.do("POST", "/v1/members", e.as(ann.Token), `{"name":"eve"}`, nil); code != http.StatusForbidden {
		t.Errorf("a member adds a member: %d", code)
	}
	boss := e.member("boss", true)
	if code, _ := e.do("GET", "/v1/members", e.as(boss.Token), "", nil); code != 200 {
		t.Errorf("an admin member lists members: %d", code)
	}

	e.create("s")
	e.grant("s", "ann", wire.AccessRead)
	w := e.dialToken(ann.Token)
	if r := w.Hello(wire.Sub{Session: "s"}); !r.OK || r.Role != wire.TokenMember || !r.Subs[0].OK {
		t.Fatalf("ann's hello: %+v", r)
	}
	if code, _ := e.do("DELETE", "/v1/members/ann", nil, "", nil); code != http.StatusNoContent {
		t.Fatalf("remove ann: %d", code)
	}
	if code := w.Closed(); code != wire.CloseBadToken {
		t.Errorf("ann's websocket closed with %d, want %d", code, wire.CloseBadToken)
	}
	if code, _ := e.do("GET", "/v1/sessions/s", e.as(ann.Token), "", nil); code != http.StatusUnauthorized {
		t.Errorf("a removed member's token: %d", code)
	}
	if code, _ := e.do("DELETE", "/v1/members/ann", nil, "", nil); code != http.StatusNotFound {
		t.Errorf("remove ann again: %d", code)
	}
}

// A member sees and does what their grants say, and the sessions they made
// are theirs.
func TestMemberAccessFollowsGrants(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	ann := e.member("ann", false).Token
	as := e.as(ann)
	e.create("s")
	put := func(text string) int {
		code, _ := e.do("PUT", "/v1/sessions/s/inputs/"+newUUID(), as, `{"text":"`+text+`"}`, nil)
		return code
	}
	var list wire.SessionList
	if e.do("GET", "/v1/sessions", as, "", &list); len(list.Sessions) != 0 {
		t.Fatalf("ann lists %d sessions before any grant", len(list.Sessions))
	}
	if code, _ := e.do("GET", "/v1/sessions/s", as, "", nil); code != http.StatusForbidden {
		t.Fatalf("ann reads s with no grant: %d", code)
	}
	e.grant("s", "ann", wire.AccessRead)
	if code, _ := e.do("GET", "/v1/sessions/s/events", as, "", nil); code != 200 {
		t.Fatalf("ann reads s with read: %d", code)
	}
	if code := put("no"); code != http.StatusForbidden {
		t.Fatalf("ann writes with read: %d", code)
	}
	e.grant("s", "ann", wire.AccessWrite)
	if code := put("yes"); code != http.StatusAccepted {
		t.Fatalf("ann writes with write: %d", code)
	}
	for _, rt := range []struct{ method, path, body string }{
		{"PATCH", "/v1/sessions/s", `{"title":"x"}`},
		{"DELETE", "/v1/sessions/s", ""},
		{"POST", "/v1/sessions/s/shares", ""},
		{"PUT", "/v1/sessions/s/grants/ann", `{"access":"write"}`},
	} {
		if code, _ := e.do(rt.method, rt.path, map[string]string{"Authorization": "Bearer " + ann, "If-Match": `"1"`}, rt.body, nil); code != http.StatusForbidden {
			t.Errorf("ann %s %s on a session she did not make: %d", rt.method, rt.path, code)
		}
	}
	// Her input says who wrote it. (A session shared for writing answers
	// only mentions: hers is a message, and starts no turn.)
	evs := e.events("s")
	var mine *wire.Event
	for i := range evs {
		if evs[i].Role == wire.RoleUser {
			mine = &evs[i]
		}
	}
	var members struct{ Members []wire.Member }
	e.do("GET", "/v1/members", nil, "", &members)
	if mine == nil || mine.Author != "ann" || mine.AuthorID != members.Members[0].ID {
		t.Fatalf("ann's message: %+v, want author ann, id %s", mine, members.Members[0].ID)
	}

	// A session she makes is hers: she renames it, grants it, deletes it.
	var own wire.Session
	if code, _ := e.do("POST", "/v1/sessions", as, `{"title":"mine"}`, &own); code != http.StatusCreated {
		t.Fatalf("ann creates a session: %d", code)
	}
	e.member("bob", false)
	if code, _ := e.do("PUT", "/v1/sessions/"+own.ID+"/grants/bob", as, `{"access":"read"}`, nil); code != http.StatusNoContent {
		t.Fatalf("ann grants her session: %d", code)
	}
	var gs struct{ Grants []wire.Grant }
	e.do("GET", "/v1/sessions/"+own.ID+"/grants", as, "", &gs)
	if len(gs.Grants) != 2 || gs.Grants[0].Member != "ann" || gs.Grants[0].Access != wire.AccessCreator ||
		gs.Grants[1].Member != "bob" || gs.Grants[1].Access != wire.AccessRead {
		t.Fatalf("grants of ann's session: %+v", gs.Grants)
	}
	if code, _ := e.do("DELETE", "/v1/sessions/"+own.ID+"/grants/ann", as, "", nil); code != http.StatusConflict {
		t.Errorf("ann takes her own creator's access: %d", code)
	}
	if e.do("GET", "/v1/sessions", as, "", &list); len(list.Sessions) != 2 {
		t.Fatalf("ann lists %d sessions, want 2", len(list.Sessions))
	}
	if code, _ := e.do("DELETE", "/v1/sessions/"+own.ID, as, "", nil); code != http.StatusNoContent {
		t.Fatalf("ann deletes her session: %d", code)
	}
	// A taken id says nothing of a session she cannot see.
	e.create("secret")
	if code, _ := e.do("PUT", "/v1/sessions/secret", map[string]string{"Authorization": "Bearer " + ann, "If-None-Match": "*"}, `{"title":"t"}`, nil); code != http.StatusConflict {
		t.Errorf("ann PUTs an id taken by a session she cannot see: %d", code)
	}
	for body, want := range map[string]int{`{"access":"admin"}`: 400, `{"access":"creator"}`: 400, `{}`: 400} {
		if code, _ := e.do("PUT", "/v1/sessions/s/grants/ann", nil, body, nil); code != want {
			t.Errorf("grant %s: %d, want %d", body, code, want)
		}
	}
	if code, _ := e.do("PUT", "/v1/sessions/s/grants/nobody", nil, `{"access":"read"}`, nil); code != http.StatusNotFound {
		t.Errorf("grant to no member: %d", code)
	}
}

// A grant taken back ends the member's subscription at once, with a reset
// that says why; a narrowed one refuses the next send.
func TestUngrantCutsTheSubscription(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	ann := e.member("ann", false).Token
	e.create("s")
	e.grant("s", "ann", wire.AccessWrite)
	w := e.dialToken(ann)
	w.Hello(wire.Sub{Session: "s"})
	e.grant("s", "ann", wire.AccessRead)
	w.Send(wire.Command{ID: 7, Op: wire.OpSend, Session: "s", InputID: newUUID(), Text: "x"})
	if r := w.Reply(7); r.OK || r.Error.Code != wire.CodeForbidden {
		t.Fatalf("a send after write became read: %+v", r)
	}
	if code, _ := e.do("DELETE", "/v1/sessions/s/grants/ann", nil, "", nil); code != http.StatusNoContent {
		t.Fatalf("ungrant: %d", code)
	}
	f := w.Next(func(f wire.Frame) bool { return f.Reset != nil })
	if f.Reset.Reason != wire.ResetRevoked || f.Reset.Session != "s" {
		t.Fatalf("reset after ungrant: %+v", f.Reset)
	}
	w.Send(wire.Command{ID: 8, Op: wire.OpSub, Session: "s"})
	if r := w.Reply(8); r.OK || r.Error == nil || r.Error.Code != wire.CodeForbidden {
		t.Fatalf("a sub after ungrant: %+v", r)
	}
}

func newUUID() string { return uuid.Must(uuid.NewV7()).String() }

// A PUT on the id of a session the caller may not see gets one answer,
// whatever its body: 409 "is taken". Another answer for a body that
// differs from the session's would confirm a guessed title.
func TestPutOnAnUnseenSessionSaysOnlyTaken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.createWith("secret", `{"title":"merger plans"}`)
	ann := e.member("ann", false).Token
	var msgs []string
	for _, body := range []string{`{"title":"merger plans"}`, `{"title":"a guess"}`, `{}`} {
		var er wire.ErrorBody
		code, _ := e.do("PUT", "/v1/sessions/secret", map[string]string{"Authorization": "Bearer " + ann, "If-None-Match": "*"}, body, &er)
		if code != http.StatusConflict || er.Error == nil || er.Error.Code != wire.CodeConflict {
			t.Fatalf("PUT %s: %d %+v, want 409 conflict", body, code, er.Error)
		}
		msgs = append(msgs, er.Error.Message)
	}
	for _, m := range msgs[1:] {
		if m != msgs[0] {
			t.Fatalf("the answers tell the bodies apart: %q", msgs)
		}
	}
}

// A member renamed keeps their id, grants and tokens: their connections
// connect again and act under the new name, and what they wrote before
// keeps its author id. Names are checked as at the making; admins only.
func TestAMemberIsRenamed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	s := e.create("s")
	ann := e.member("ann", false)
	e.member("bob", false)
	e.botToken("poster")
	e.grant("s", "ann", wire.AccessWrite)
	w := e.dialToken(ann.Token).HelloFromStart(s)
	w.Send(wire.Command{ID: 2, Op: wire.OpSend, Session: "s", InputID: newUUID(), Text: "before"})
	before := w.Next(func(f wire.Frame) bool { return f.Op == wire.PushEvent && f.Event.Text == "before" }).Event

	var m wire.Member
	if code, _ := e.do("PATCH", "/v1/members/ann", nil, `{"name":"anne"}`, &m); code != 200 || m.Name != "anne" || m.ID != before.AuthorID {
		t.Fatalf("rename: %d %+v, her id %s", code, m, before.AuthorID)
	}
	if code := w.Closed(); code != websocket.StatusPolicyViolation {
		t.Fatalf("her connection closed with %d", code)
	}
	w = e.dialToken(ann.Token)
	if r := w.Hello(); r.You == nil || r.You.Name != "anne" || r.You.ID != m.ID {
		t.Fatalf("hello after: %+v", r.You)
	}
	w.Send(wire.Command{ID: 2, Op: wire.OpSend, Session: "s", InputID: newUUID(), Text: "after"})
	if r := w.Reply(2); !r.OK {
		t.Fatalf("send after: %+v", r.Error)
	}
	var after wire.Event
	for _, ev := range e.events("s") {
		switch ev.Text {
		case "before":
			if ev.Author != "ann" {
				t.Errorf("what she wrote before now says %q", ev.Author)
			}
		case "after":
			after = ev
		}
	}
	if after.Author != "anne" || after.AuthorID != before.AuthorID {
		t.Fatalf("what she writes now: %+v", after)
	}
	var list struct{ Members []wire.Member }
	if code, _ := e.do("GET", "/v1/members", nil, "", &list); code != 200 || len(list.Members) != 2 || list.Members[0].Name != "anne" {
		t.Fatalf("members: %d %+v", code, list)
	}

	for body, want := range map[string]int{
		`{"name":"bob"}`: http.StatusConflict, `{"name":"poster"}`: http.StatusConflict,
		`{"name":""}`: http.StatusBadRequest, `{"name":"-x"}`: http.StatusBadRequest, `{"name":"b a d"}`: http.StatusBadRequest,
	} {
		if code, _ := e.do("PATCH", "/v1/members/anne", nil, body, nil); code != want {
			t.Errorf("PATCH %s: %d, want %d", body, code, want)
		}
	}
	if code, _ := e.do("PATCH", "/v1/members/nosuch", nil, `{"name":"zed"}`, nil); code != http.StatusNotFound {
		t.Errorf("no such member: %d", code)
	}
	if code, _ := e.do("PATCH", "/v1/members/bob", e.as(ann.Token), `{"name":"zed"}`, nil); code != http.StatusForbidden {
		t.Errorf("a member renaming another: %d", code)
	}
}

// A home's member takes the name config.toml gives when it changes: its
// first member, an admin, is renamed rather than a second admin made;
// with no name given, it keeps its own (a rename's); a name another
// member has is refused, saying what to do; a store that nodes share
// makes a member of the name.
func TestTheHomesMemberTakesTheConfiguredName(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	ctx := context.Background()
	root, err := e.hub.EnsureMember(ctx, hub.Runner{Name: "root", Home: true})
	if err != nil {
		t.Fatal(err)
	}
	e.member("ann", false)
	alice, err := e.hub.EnsureMember(ctx, hub.Runner{Name: "alice", Named: true, Home: true})
	if err != nil || alice.MemberID != root.MemberID || alice.Name != "alice" {
		t.Fatalf("alice: %+v %v, root was %+v", alice, err, root)
	}
	if again, err := e.hub.EnsureMember(ctx, hub.Runner{Name: "root", Home: true}); err != nil || again.MemberID != root.MemberID || again.Name != "alice" {
		t.Fatalf("no name given, after: %+v %v", again, err)
	}
	if _, err := e.hub.EnsureMember(ctx, hub.Runner{Name: "ann", Named: true, Home: true}); !isCode(err, wire.CodeConflict) || !strings.Contains(err.Error(), "albedo members rename") {
		t.Fatalf("a name another member has: %v", err)
	}
	var list struct{ Members []wire.Member }
	if code, _ := e.do("GET", "/v1/members", nil, "", &list); code != 200 || len(list.Members) != 2 || list.Members[0].Name != "alice" || list.Members[1].Name != "ann" {
		t.Fatalf("members: %d %+v", code, list)
	}
	if other, err := e.hub.EnsureMember(ctx, hub.Runner{Name: "carol", Named: true}); err != nil || other.MemberID == root.MemberID {
		t.Fatalf("a shared store's: %+v %v", other, err)
	}
}

// isCode says whether err is a *wire.Error of code.
func isCode(err error, code wire.Code) bool {
	var we *wire.Error
	return errors.As(err, &we) && we.Code == code
}
