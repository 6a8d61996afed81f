package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/wire"
)

// A fork's history is its parent's prefix byte for byte on every node of
// a cluster, live through a viewer as through pages; and still so, on
// every node, once the parent is deleted on another (a node that had the
// fork's channel loaded finds its events moved, not a gap).
func TestClusterForkIsTheSamePrefixOnEveryNode(t *testing.T) {
	parallel(t)
	cl, _ := startNATSCluster(t, 3)
	ctx := ctxT(t)
	a, b, c := cl.nodes[0], cl.nodes[1], cl.nodes[2]
	p, err := a.c.CreateSession(ctx, "tree", wire.SessionCreate{Title: "tree"})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", "two", "three"} {
		if _, err := a.c.PutInput(ctx, p.ID, uuid.NewString(), text); err != nil {
			t.Fatal(err)
		}
	}
	at := closedTurn(waitTurnsClosed(t, ctx, a.c, p.ID, 3), 2)
	parent := pageEvents(t, c, p.ID)
	f, err := b.c.Fork(ctx, p.ID, wire.ForkRequest{At: at})
	if err != nil {
		t.Fatal(err)
	}
	if f.Parent == nil || f.Parent.Offset != at || f.Head != at {
		t.Fatalf("the fork at %d: %+v", at, f)
	}
	live := watch(t, ctx, c, map[string]string{f.ID: f.Epoch})
	for _, nd := range cl.nodes {
		got := pageEvents(t, nd, f.ID)
		if strings.Join(got, "\n") != strings.Join(parent[:at], "\n") {
			t.Fatalf("the fork on %s:\n%s\nthe parent's:\n%s", nd.name, strings.Join(got, "\n"), strings.Join(parent[:at], "\n"))
		}
	}
	for !live.has(f.ID, int(at)) {
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := b.c.PutInput(ctx, f.ID, uuid.NewString(), "four, in the fork"); err != nil {
		t.Fatal(err)
	}
	waitTurnsClosed(t, ctx, b.c, f.ID, 3)
	before := pageEvents(t, a, f.ID)
	if err := c.c.DeleteSession(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	for _, nd := range cl.nodes {
		if got := pageEvents(t, nd, f.ID); strings.Join(got, "\n") != strings.Join(before, "\n") {
			t.Fatalf("the fork on %s after its parent went:\n%s\nbefore:\n%s", nd.name, strings.Join(got, "\n"), strings.Join(before, "\n"))
		}
	}
	// A viewer from the start on the node whose channel read the
	// parent's rows: the whole fork, no gap, no duplicate.
	again := watch(t, ctx, c, map[string]string{f.ID: f.Epoch})
	for !again.has(f.ID, len(before)) {
		time.Sleep(5 * time.Millisecond)
	}
	if strings.Join(again.got[f.ID], "\n") != strings.Join(before, "\n") {
		t.Fatalf("a viewer of the fork after its parent went saw:\n%s", strings.Join(again.got[f.ID], "\n"))
	}
}

// albedo fork and albedo forks: the fork's export is the parent's first
// events, byte for byte; and a daemon killed while forks are being made
// leaves, after its restart, only whole forks: each listed, each the
// parent's prefix, none half made.
func TestCLIForkAndAKillDuringForks(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "orig"})
	for _, text := range []string{"first", "second"} {
		if _, err := fx.c.PutInput(fx.ctx, "orig", uuid.NewString(), text); err != nil {
			t.Fatal(err)
		}
	}
	at := closedTurn(waitTurnsClosed(t, fx.ctx, fx.c, "orig", 2), 1)
	id := strings.TrimSpace(cli(t, fx.home, "fork", "orig", "--at", fmt.Sprint(at), "--title", "the fork"))
	var a, b exported
	if err := json.Unmarshal([]byte(cli(t, fx.home, "export", "orig", "--format", "json")), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(cli(t, fx.home, "export", id, "--format", "json")), &b); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a.Events[:at])
	jb, _ := json.Marshal(b.Events)
	if string(ja) != string(jb) || b.Session.Parent == nil || b.Session.Parent.Session != "orig" || b.Session.Title != "the fork" {
		t.Fatalf("the fork's export: %+v\n%s\nthe parent's first %d:\n%s", b.Session, jb, at, ja)
	}
	if md := cli(t, fx.home, "export", id); !strings.Contains(md, fmt.Sprintf("- forked from: `orig` at #%d", at)) {
		t.Fatalf("the fork's Markdown export does not say where it came from:\n%s", md)
	}
	if out := cli(t, fx.home, "forks", "orig"); !strings.Contains(out, id) || !strings.Contains(out, "the fork") {
		t.Fatalf("albedo forks:\n%s", out)
	}
	_, stderr, code := cliRun(t, fx.home, "", "fork", "orig")
	wantExit(t, "a fork with no --at", stderr, code, 2, "--at")

	// Forks made as fast as they go while the daemon is killed.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := fx.c.Fork(fx.ctx, "orig", wire.ForkRequest{At: int64(1 + (w+i)%8), Title: fmt.Sprint("k", w, i)}); err != nil {
					return
				}
			}
		})
	}
	for n := 0; n < 20; {
		forks, err := fx.c.Forks(fx.ctx, "orig")
		if err != nil {
			t.Fatal(err)
		}
		n = len(forks)
	}
	fx.d.kill()
	close(stop)
	wg.Wait()
	fx.d = startDaemon(t, fx.home)
	forks, err := fx.c.Forks(fx.ctx, "orig")
	if err != nil || len(forks) < 20 {
		t.Fatalf("forks after the kill: %d, %v", len(forks), err)
	}
	orig := pageEventsOf(t, fx, "orig")
	for _, f := range forks {
		got := pageEventsOf(t, fx, f.ID)
		at := int(f.Parent.Offset)
		if len(got) < at || strings.Join(got[:at], "\n") != strings.Join(orig[:at], "\n") || int64(len(got)) != f.Head {
			t.Fatalf("fork %s (at %d, head %d) after the kill:\n%s", f.ID, at, f.Head, strings.Join(got, "\n"))
		}
	}
}

// pageEventsOf is pageEvents through a fixture's client.
func pageEventsOf(t *testing.T, fx *fixture, session string) []string {
	t.Helper()
	var out []string
	if err := fx.c.AllEvents(fx.ctx, session, func(raw json.RawMessage, _ wire.Event) error {
		out = append(out, string(raw))
		return nil
	}); err != nil {
		t.Fatalf("history of %s: %v", session, err)
	}
	return out
}

// closedTurn is the offset of the nth turn event that closes a turn: a
// fork point after which the fork starts with no open turn, whichever
// order the turns' events came in.
func closedTurn(evs []wire.Event, n int) int64 {
	for _, ev := range evs {
		if ev.Type == wire.EventTurn && ev.State != wire.TurnStarted {
			if n--; n == 0 {
				return ev.Offset
			}
		}
	}
	return 0
}
