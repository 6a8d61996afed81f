package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"albedo/wire"
)

// feedOf starts w's feed with cmd (its op and id set here) and returns
// the reply's feed.
func feedOf(t *testing.T, w *wsClient, cmd wire.Command) *wire.FeedReply {
	t.Helper()
	cmd.ID, cmd.Op = 77, wire.OpFeed
	w.Send(cmd)
	r := w.Reply(77)
	if !r.OK || r.Feed == nil {
		t.Fatalf("feed: %+v", r)
	}
	return r.Feed
}

// feedUntil reads feed pushes until ok says the sessions and gone ids
// seen so far are enough, and returns the last push's pos.
func feedUntil(t *testing.T, w *wsClient, seen map[string]wire.FeedItem, gone map[string]bool, ok func() bool) string {
	t.Helper()
	pos := ""
	for !ok() {
		f := w.Next(func(f wire.Frame) bool { return f.Op == wire.PushFeed })
		if len(f.Feed.Sessions)+len(f.Feed.Gone) > wire.MaxFeedPush {
			t.Fatalf("a push of %d sessions and %d gone: over %d", len(f.Feed.Sessions), len(f.Feed.Gone), wire.MaxFeedPush)
		}
		for _, it := range f.Feed.Sessions {
			seen[it.ID] = it
		}
		for _, id := range f.Feed.Gone {
			gone[id] = true
		}
		for _, id := range f.Feed.Revoked {
			if !slices.Contains(f.Feed.Gone, id) {
				t.Fatalf("a push names %s revoked and not gone: %+v", id, f.Feed)
			}
		}
		pos = f.Feed.Pos
	}
	return pos
}

// goneWhy reads feed pushes until one names session gone, and says
// whether that push names it revoked too, and the push's pos.
func goneWhy(t *testing.T, w *wsClient, session string) (revoked bool, pos string) {
	t.Helper()
	for {
		f := w.Next(func(f wire.Frame) bool { return f.Op == wire.PushFeed })
		if slices.Contains(f.Feed.Gone, session) {
			return slices.Contains(f.Feed.Revoked, session), f.Feed.Pos
		}
	}
}

func ids(items []wire.FeedItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

// The feed's first page is the newest sessions by activity, each with
// what a sidebar shows (the newest message's first line and author, the
// person's unread count); later pages go on from the first's cursor.
func TestFeedPagesByActivity(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	for _, id := range []string{"a", "b", "c"} {
		e.create(id)
	}
	e.say("a", "first line of a\nand a second")
	e.settle("a", 1)

	w := e.dial(true)
	w.Hello()
	r := feedOf(t, w, wire.Command{Limit: 2})
	if r.Resumed || r.Pos == "" || r.Next == "" {
		t.Fatalf("the first page: %+v", r)
	}
	if got := ids(r.Sessions); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("first page %v, want [a c]", got)
	}
	a := r.Sessions[0]
	if a.Head != 4 || a.Last == nil || a.Last.Offset != 3 || a.Last.Role != wire.RoleAssistant || !strings.Contains(a.Last.Text, "first line of a") || strings.Contains(a.Last.Text, "second") {
		t.Fatalf("a as the feed shows it: %+v last %+v", a, a.Last)
	}
	if a.Unread != 1 || a.Read != 1 || a.Provider != "echo" || a.Phase != wire.PhaseIdle || a.LastTurn != wire.TurnCompleted {
		t.Fatalf("a's unread, provider, phase: %+v", a)
	}
	w.Send(wire.Command{ID: 2, Op: wire.OpFeedPage, Cursor: r.Next, Limit: 2})
	p := w.Reply(2)
	if !p.OK || p.Feed == nil || !slices.Equal(ids(p.Feed.Sessions), []string{"b"}) || p.Feed.Next != "" {
		t.Fatalf("the second page: %+v", p)
	}
	if p.Feed.Sessions[0].Last != nil || p.Feed.Sessions[0].Unread != 0 {
		t.Fatalf("an empty session: %+v", p.Feed.Sessions[0])
	}

	// Reading a marks it read: the read push says so with its count.
	if code, _ := e.do("PUT", "/v1/sessions/a/read", nil, `{"offset":4}`, nil); code != 200 {
		t.Fatalf("read: %d", code)
	}
	f := w.Next(func(f wire.Frame) bool { return f.Op == wire.PushRead })
	if f.Read.Session != "a" || f.Read.Offset != 4 || f.Read.Unread != 0 {
		t.Fatalf("the read push to a feed: %+v", f.Read)
	}
	if r := feedOf(t, e.dialHello(), wire.Command{}); r.Sessions[0].ID != "a" || r.Sessions[0].Read != 4 || r.Sessions[0].Unread != 0 {
		t.Fatalf("after reading: %+v", r.Sessions[0])
	}
}

// dialHello dials as the owner and says hello.
func (e *env) dialHello() *wsClient {
	w := e.dial(true)
	w.Hello()
	return w
}

// Live, the feed names only the sessions that changed, as they are now,
// and those deleted; a resume from a push's pos, on the same daemon or
// (by time) another, brings what changed since and nothing of the rest.
func TestFeedLiveAndResumed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	for _, id := range []string{"a", "b", "c", "d"} {
		e.create(id)
	}
	w := e.dialHello()
	feedOf(t, w, wire.Command{})
	e.say("b", "hello b")
	seen, gone := map[string]wire.FeedItem{}, map[string]bool{}
	feedUntil(t, w, seen, gone, func() bool { return seen["b"].LastTurn == wire.TurnCompleted })
	if len(seen) != 1 || seen["b"].Last == nil || !strings.Contains(seen["b"].Last.Text, "hello b") {
		t.Fatalf("pushed %v, want only b with its reply", seen)
	}
	if code, _ := e.do("DELETE", "/v1/sessions/c", nil, "", nil); code != http.StatusNoContent {
		t.Fatalf("delete: %d", code)
	}
	revoked, pos := goneWhy(t, w, "c")
	if revoked {
		t.Fatal("a deleted session said revoked")
	}

	// Away: a changes, d goes, e is made.
	w.Conn.CloseNow()
	e.say("a", "while away")
	e.settle("a", 1)
	e.do("DELETE", "/v1/sessions/d", nil, "", nil)
	e.create("e")
	for name, p := range map[string]string{"same daemon": pos, "another daemon": otherBoot(pos)} {
		w := e.dialHello()
		r := feedOf(t, w, wire.Command{Pos: p})
		if !r.Resumed || len(r.Sessions) != 0 {
			t.Fatalf("%s: resume: %+v", name, r)
		}
		seen, gone := map[string]wire.FeedItem{}, map[string]bool{}
		feedUntil(t, w, seen, gone, func() bool { return seen["a"].LastTurn == wire.TurnCompleted && gone["d"] && seen["e"].ID != "" })
		if name == "same daemon" && (seen["b"].ID != "" || gone["c"]) {
			t.Fatalf("%s: said again what the client had: %v %v", name, seen, gone)
		}
	}
	// A position this daemon cannot read starts again, with a first page.
	if r := feedOf(t, e.dialHello(), wire.Command{Pos: "nonsense"}); r.Resumed || !slices.Equal(ids(r.Sessions), []string{"e", "a", "b"}) {
		t.Fatalf("from nonsense: %+v", r)
	}
}

// otherBoot is pos as another daemon (restarted, another node) would read
// it: the same time, another index.
func otherBoot(pos string) string {
	_, rest, _ := strings.Cut(pos, ".")
	return "elsewhere." + rest
}

// A member's feed holds the sessions they may see; a grant brings one in,
// and its removal says it gone and revoked. Tokens that list no sessions may not
// follow the feed, and bad arguments are bad_request.
func TestFeedFollowsAccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("mine")
	e.create("theirs")
	ann := e.member("ann", false)
	e.grant("mine", "ann", wire.AccessWrite)
	w := e.dialToken(ann.Token)
	w.Hello()
	if r := feedOf(t, w, wire.Command{}); !slices.Equal(ids(r.Sessions), []string{"mine"}) {
		t.Fatalf("ann's first page: %v", ids(r.Sessions))
	}
	seen, gone := map[string]wire.FeedItem{}, map[string]bool{}
	e.grant("theirs", "ann", wire.AccessRead)
	feedUntil(t, w, seen, gone, func() bool { return seen["theirs"].ID != "" })
	if code, _ := e.do("DELETE", "/v1/sessions/theirs/grants/ann", nil, "", nil); code != http.StatusNoContent {
		t.Fatalf("ungrant: %d", code)
	}
	if revoked, _ := goneWhy(t, w, "theirs"); !revoked {
		t.Fatal("a session whose grant was removed is gone, not revoked")
	}

	v := e.dialToken(e.viewerToken("mine"))
	v.Hello()
	v.Send(wire.Command{ID: 5, Op: wire.OpFeed})
	if r := v.Reply(5); r.OK || r.Error.Code != wire.CodeForbidden {
		t.Fatalf("a viewer's feed: %+v", r)
	}
	o := e.dialHello()
	for i, bad := range []wire.Command{{Op: wire.OpFeed, Limit: -1}, {Op: wire.OpFeedPage, Cursor: "x"}, {Op: wire.OpFeedPage, Cursor: "x", Limit: -3}, {Op: wire.OpFeedPage, Limit: 2} /* no cursor */} {
		bad.ID = int64(10 + i)
		o.Send(bad)
		if r := o.Reply(bad.ID); r.OK || r.Error.Code != wire.CodeBadRequest {
			t.Fatalf("%+v: %+v", bad, r)
		}
	}
}

// Many sessions changed at once come in pushes of at most MaxFeedPush,
// every one of them, each once it is caught up with.
func TestFeedPushesAreBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	w := e.dialHello()
	feedOf(t, w, wire.Command{})
	const n = 150
	for i := range n {
		e.create(fmt.Sprintf("s%03d", i))
	}
	seen, gone := map[string]wire.FeedItem{}, map[string]bool{}
	feedUntil(t, w, seen, gone, func() bool { return len(seen) == n })
}
