package hub

import (
	"context"
	"testing"
)

// Members says how many connections each member holds on this node,
// counted from the connections of their author id alone, and a closed
// one no longer counts.
func TestMembersCountTheirConnections(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	ctx := context.Background()
	_, ann, err := h.AddMember(ctx, "ann", false)
	if err != nil {
		t.Fatal(err)
	}
	_, bob, err := h.AddMember(ctx, "bob", false)
	if err != nil {
		t.Fatal(err)
	}
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
