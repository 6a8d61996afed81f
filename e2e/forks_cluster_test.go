//go:build !e2e_only || e2e_cluster

package e2e

import (
	"strings"
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
