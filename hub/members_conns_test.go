package hub

import (
	"context"
	"path/filepath"
	"testing"

	"albedo/wire"
)

// Members says how many connections each member holds on this node,
// counted from the connections of their author id alone, and a closed
// one no longer counts.
func TestMembersCountTheirConnections(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	ctx := context.Background()
	ann, bob := mustAddMember(t, h, "ann"), mustAddMember(t, h, "bob")
	a1 := h.Connect(ConnInfo{Name: "ann", AuthorID: ann.ID})
	h.Connect(ConnInfo{Name: "ann", AuthorID: ann.ID})
	h.Connect(ConnInfo{Name: "bob", AuthorID: bob.ID})
	h.Connect(ConnInfo{Name: "viewer", AuthorID: "someone-else"})
	online := func() map[string]int {
		t.Helper()
		ms, err := h.Members(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, m := range ms {
			n[m.Name] = m.Online
		}
		return n
	}
	if n := online(); n["ann"] != 2 || n["bob"] != 1 || len(n) != 2 {
		t.Fatalf("online %v, want ann 2 and bob 1", n)
	}
	a1.Close()
	if n := online(); n["ann"] != 1 || n["bob"] != 1 {
		t.Fatalf("online after one of ann's closed %v", n)
	}
}

// A hub started on a store holds the grants made before it: each member's
// access to each session, as the hub that made them had it.
func TestGrantsHoldAfterAStart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "albedo.db")
	ctx := context.Background()
	h, err := Open(ctx, path, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ann, bob := mustAddMember(t, h, "ann"), mustAddMember(t, h, "bob")
	for _, s := range []string{"s1", "s2"} {
		mustCreate(t, h, s)
	}
	grants := []struct {
		session string
		member  wire.Member
		access  wire.Access
	}{{"s1", ann, wire.AccessWrite}, {"s2", ann, wire.AccessRead}, {"s2", bob, wire.AccessWrite}}
	for _, g := range grants {
		if err := h.Grant(ctx, g.session, g.member.Name, g.access); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	h = openTestHub(t, path, Options{})
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, g := range grants {
		if got := h.tokens.Access(g.member.ID, g.session); got != g.access {
			t.Errorf("after a start, %s's access to %s is %q, want %q", g.member.Name, g.session, got, g.access)
		}
	}
	if got := h.tokens.Access(bob.ID, "s1"); got != "" {
		t.Errorf("after a start, bob's access to s1 is %q, want none", got)
	}
}

// mustAddMember adds a member who is not an admin.
func mustAddMember(t *testing.T, h *Hub, name string) wire.Member {
	t.Helper()
	_, m, err := h.AddMember(context.Background(), name, false)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
