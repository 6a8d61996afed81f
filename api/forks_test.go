package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// forkOf forks session as the owner with body, wanting code.
func (e *env) forkOf(session, body string, code int) (wire.Session, wire.ErrorBody) {
	e.t.Helper()
	var raw json.RawMessage
	got, _ := e.do("POST", "/v1/sessions/"+session+"/fork", nil, body, &raw)
	var s wire.Session
	var er wire.ErrorBody
	json.Unmarshal(raw, &s)
	json.Unmarshal(raw, &er)
	if got != code {
		e.t.Fatalf("fork %s %s: %d %s, want %d", session, body, got, raw, code)
	}
	return s, er
}

// texts are the texts a provider's request carried, system text aside.
func texts(r fakeopenai.Request) []string {
	var out []string
	for _, m := range r.Messages {
		var msg struct{ Role, Content string }
		json.Unmarshal(m, &msg)
		if msg.Role != "system" {
			out = append(out, msg.Role+":"+msg.Content)
		}
	}
	return out
}

// sameEvents checks that got starts with want, byte for byte.
func sameEvents(t *testing.T, want, got []json.RawMessage) {
	t.Helper()
	if len(got) < len(want) {
		t.Fatalf("%d events, want at least %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(want[i], got[i]) {
			t.Fatalf("event %d: %s, want %s", i+1, got[i], want[i])
		}
	}
}

// A fork at an assistant's reply holds the parent's events up to it, byte
// for byte, then closes the turn the reply was in; a regenerate (rerun at that reply) runs its input again with
// the context before it; an edit (a fork just before a user's message,
// then the new text) sends the new text in its place. The parent is left
// as it was, lists its forks, and its deletion leaves them whole.
func TestForkRegenerateAndEdit(t *testing.T) {
	t.Parallel()
	e, f := newFakeEnv(t)
	e.createWith("p", `{"provider":"fake","title":"p"}`)
	e.say("p", "one")
	e.settle("p", 1)
	e.say("p", "two")
	e.settle("p", 2)
	parent := e.history("p") // 1 one, 2 started, 3 reply, 4 completed, 5 two, 6 started, 7 reply, 8 completed
	if len(parent) != 8 {
		t.Fatalf("parent: %d events", len(parent))
	}

	at, _ := e.forkOf("p", `{"at":7,"title":"from the reply"}`, http.StatusCreated)
	if at.Parent == nil || *at.Parent != (wire.ForkPoint{Session: "p", Offset: 7}) || at.Head != 8 || at.Title != "from the reply" || at.Access != wire.AccessCreator {
		t.Fatalf("fork at a reply: %+v", at)
	}
	// Its turn is open at the reply: the fork closes it as its own.
	atLog := e.history(at.ID)
	sameEvents(t, parent[:7], atLog)
	var closing wire.Event
	if json.Unmarshal(atLog[7], &closing); closing.State != wire.TurnInterrupted || closing.Reason != wire.ReasonFork {
		t.Fatalf("the fork's own first event: %s", atLog[7])
	}

	asked := len(f.Requests())
	regen, _ := e.forkOf("p", `{"at":7,"rerun":true}`, http.StatusCreated)
	// Untitled forks are titled as forks, numbered among the parent's.
	if regen.Parent.Offset != 5 || regen.Title != "p (fork 2)" {
		t.Fatalf("regenerate: %+v", regen)
	}
	evs := e.settle(regen.ID, 2) // the parent's first turn, then its own
	if n := len(evs); n != 8 || evs[5].Type != wire.EventTurn || evs[5].State != wire.TurnStarted || evs[7].State != wire.TurnCompleted {
		t.Fatalf("regenerated: %+v", evs)
	}
	reqs := f.Requests()
	want := fmt.Sprint([]string{"user:one", "assistant:" + evs[2].Text, "user:two"})
	if len(reqs) != asked+1 || fmt.Sprint(texts(reqs[asked])) != want {
		t.Fatalf("regenerate asked %d times, last with %v, want %s", len(reqs)-asked, texts(reqs[len(reqs)-1]), want)
	}

	edit, _ := e.forkOf("p", `{"at":4}`, http.StatusCreated)
	if edit.Title != "p (fork 3)" {
		t.Fatalf("the edit's title: %q", edit.Title)
	}
	if again, _ := e.forkOf(edit.ID, `{"at":0}`, http.StatusCreated); again.Title != "p (fork 3.1)" {
		t.Fatalf("a fork of a fork: %q", again.Title)
	}
	e.say(edit.ID, "two, edited")
	e.settle(edit.ID, 2)
	reqs = f.Requests()
	want = fmt.Sprint([]string{"user:one", "assistant:" + evs[2].Text, "user:two, edited"})
	if got := fmt.Sprint(texts(reqs[len(reqs)-1])); got != want {
		t.Fatalf("edit sent %s, want %s", got, want)
	}
	if now := e.history("p"); len(now) != 8 {
		t.Fatalf("the parent has %d events after its forks ran", len(now))
	} else {
		sameEvents(t, parent, now)
	}

	var list wire.ForkList
	if code, _ := e.do("GET", "/v1/sessions/p/forks", nil, "", &list); code != 200 || len(list.Forks) != 3 ||
		list.Forks[0].ID != edit.ID || list.Forks[1].ID != regen.ID || list.Forks[2].ID != at.ID {
		t.Fatalf("forks of p: %d %+v", code, list)
	}

	keep := map[string][]json.RawMessage{}
	for _, id := range []string{at.ID, regen.ID, edit.ID} {
		keep[id] = e.history(id)
	}
	if code, _ := e.do("DELETE", "/v1/sessions/p", nil, "", nil); code != http.StatusNoContent {
		t.Fatalf("delete p: %d", code)
	}
	for id, want := range keep {
		got := e.history(id)
		if len(got) != len(want) {
			t.Fatalf("%s has %d events after its parent went, had %d", id, len(got), len(want))
		}
		sameEvents(t, want, got)
	}
	var s wire.Session
	if code, _ := e.do("GET", "/v1/sessions/"+at.ID, nil, "", &s); code != 200 || s.Parent == nil || s.Parent.Session != "p" {
		t.Fatalf("a fork of a deleted parent: %d %+v", code, s)
	}
}

// A fork at 0 holds none of the parent's events; a fork refuses what is
// not a point of the log, a rerun of what is no
// input, a session that does not exist, a body it cannot read, and a
// caller with no right to make sessions.
func TestForkRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("p")
	e.say("p", "hello")
	e.settle("p", 1) // echo: 1 hello, 2 started, 3 reply, 4 completed
	for _, c := range []struct {
		session, body string
		code          int
		errCode       wire.Code
	}{
		{"p", `{"at":0,"rerun":true}`, 400, wire.CodeBadRequest},
		{"p", `{"at":5}`, 400, wire.CodeBadRequest},
		{"p", `{"at":-1}`, 400, wire.CodeBadRequest},
		{"p", `{"at":2,"rerun":true}`, 400, wire.CodeBadRequest},
		{"p", `{"at":"1"}`, 400, wire.CodeBadRequest},
		{"p", `{}`, 400, wire.CodeBadRequest},            // at is required
		{"p", `{"title":"t"}`, 400, wire.CodeBadRequest}, // at is required
		{"p", `{"at":null}`, 400, wire.CodeBadRequest},   // at is required
		{"p", `{"at":1,"title":"a\u0000b"}`, 400, wire.CodeBadRequest},
		{"nope", `{"at":1}`, 404, wire.CodeNotFound},
	} {
		_, er := e.forkOf(c.session, c.body, c.code)
		if er.Error.Code != c.errCode {
			t.Errorf("%s %s: %+v", c.session, c.body, er)
		}
	}
	if empty, _ := e.forkOf("p", `{"at":0}`, 201); empty.Head != 0 || empty.Parent.Offset != 0 || len(e.history(empty.ID)) != 0 {
		t.Fatalf("a fork at 0: %+v", empty)
	}
	var er wire.ErrorBody
	if code, _ := e.do("POST", "/v1/sessions/p/fork", e.as(e.viewerToken("p")), `{"at":1}`, &er); code != 403 {
		t.Fatalf("a viewer's fork: %d %+v", code, er)
	}
	var list wire.ForkList
	if code, _ := e.do("GET", "/v1/sessions/p/forks", e.as(e.viewerToken("p")), "", &list); code != 200 || list.Forks == nil || len(list.Forks) != 0 {
		t.Fatalf("a viewer's list of no forks: %d %+v", code, list)
	}
}

// A search in a fork finds its own messages and those it holds of its
// parent's, as the fork's, and none of the parent's after the fork point.
func TestSearchInAFork(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("p")
	e.say("p", "zebra before the fork")
	e.settle("p", 1) // echo: 1 the input, 2 started, 3 reply, 4 completed
	f, _ := e.forkOf("p", `{"at":4}`, http.StatusCreated)
	e.say("p", "zebra after the fork, the parent's alone")
	e.settle("p", 2)
	e.say(f.ID, "zebra in the fork")
	e.settle(f.ID, 2)
	var res wire.SearchResults
	if code, _ := e.do("GET", "/v1/search?q=zebra&session="+f.ID, nil, "", &res); code != 200 {
		t.Fatalf("search in the fork: %d", code)
	}
	var got []string
	for _, r := range res.Results {
		if r.Session != f.ID || r.Title != f.Title {
			t.Fatalf("a hit in the fork shown as %q (%q)", r.Session, r.Title)
		}
		got = append(got, fmt.Sprintf("%d:%s", r.Offset, r.Role))
	}
	// Newest first: the fork's reply and input, then the parent's reply
	// and input it holds.
	if want := "[7:assistant 5:user 3:assistant 1:user]"; fmt.Sprint(got) != want {
		t.Fatalf("search in the fork found %v, want %s", got, want)
	}
	// A page at a time, the cursor going from the fork's own into what it
	// holds of its parent's.
	if code, _ := e.do("GET", "/v1/search?q=zebra&limit=3&session="+f.ID, nil, "", &res); code != 200 || len(res.Results) != 3 || res.Next == "" {
		t.Fatalf("first page: %d %+v", code, res)
	}
	if code, _ := e.do("GET", "/v1/search?q=zebra&limit=3&session="+f.ID+"&after="+res.Next, nil, "", &res); code != 200 || len(res.Results) != 1 || res.Results[0].Offset != 1 {
		t.Fatalf("second page: %d %+v", code, res)
	}
}

// A search across sessions finds, for a member granted only a fork, the
// first events the fork reads from its parent's rows, as the fork's; and
// still does once the parent is deleted and another fork (the heir)
// holds those rows. Nothing of the parent's own after the fork point.
func TestSearchAcrossSessionsThroughAFork(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("p")
	e.say("p", "zebra before the forks")
	e.settle("p", 1)
	heir, _ := e.forkOf("p", `{"at":4}`, http.StatusCreated)
	f, _ := e.forkOf("p", `{"at":2}`, http.StatusCreated) // the user's input and the turn's start
	e.say("p", "zebra after the forks, the parent's alone")
	e.settle("p", 2)
	e.say(f.ID, "zebra in the fork")
	e.settle(f.ID, 1)
	m := e.member("mia", false)
	e.grant(f.ID, "mia", wire.AccessRead)

	found := func() string {
		t.Helper()
		var res wire.SearchResults
		if code, _ := e.do("GET", "/v1/search?q=zebra", e.as(m.Token), "", &res); code != 200 {
			t.Fatalf("search: %d", code)
		}
		var got []string
		for _, r := range res.Results {
			if r.Session != f.ID || r.Title != f.Title {
				t.Fatalf("a hit shown as %q (%q), want the fork's", r.Session, r.Title)
			}
			got = append(got, fmt.Sprintf("%d:%s", r.Offset, r.Role))
		}
		return fmt.Sprint(got)
	}
	// The fork's own input and reply, then the parent's input it reads.
	if got, want := found(), "[6:assistant 4:user 1:user]"; got != want {
		t.Fatalf("the member found %v, want %s", got, want)
	}
	if code, _ := e.do("DELETE", "/v1/sessions/p", nil, "", nil); code != http.StatusNoContent {
		t.Fatalf("delete the parent: %d", code)
	}
	if got, want := found(), "[6:assistant 4:user 1:user]"; got != want {
		t.Fatalf("once the parent was deleted (its rows %s's), the member found %v, want %s", heir.ID, got, want)
	}
}
