package hub

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"albedo/db/pgtest"
	"albedo/wire"
)

// clusterPair opens two nodes of a cluster on one database of the
// package's PostgreSQL, without NATS: what one makes the other learns only
// from the store.
func clusterPair(t *testing.T) (a, b *Hub) {
	t.Helper()
	url := pgtest.Shared(t).Database(t)
	return openTestHub(t, url, Options{Node: "a"}), openTestHub(t, url, Options{Node: "b"})
}

// A node looks up a token made on another without waiting for a change
// of its own tokens in progress, and without holding it back: here one
// is (it holds the tokens' ops, as a revocation waiting for the store
// does) while the lookup runs.
func TestTokenLookupsHoldNothingBack(t *testing.T) {
	t.Parallel()
	a, b := clusterPair(t)
	ctx := context.Background()
	tok, err := a.AddBot(ctx, "helper", nil)
	if err != nil {
		t.Fatal(err)
	}
	unlock := b.tokens.Changing()
	var once sync.Once
	release := func() { once.Do(unlock) }
	defer release()
	done := make(chan bool, 1)
	go func() { _, ok := b.Authenticate(tok); done <- ok }()
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("node b did not find the bot node a made")
		}
	case <-time.After(10 * time.Second):
		release()
		<-done
		t.Fatal("the lookup waited for a change of tokens in progress")
	}
	if p, ok := b.Authenticate(tok); !ok || p.Name != "helper" {
		t.Fatalf("again: %+v %v", p, ok)
	}
	if n := b.Stats().TokenLookups; n != 1 {
		t.Fatalf("%d lookups, want 1: the second was b's own table's", n)
	}
}

// A made-up token is looked up in the store once; its repeats are
// refused from memory. A token made afterwards is still found.
func TestMadeUpTokensAreLookedUpOnce(t *testing.T) {
	t.Parallel()
	a, b := clusterPair(t)
	for range 3 {
		if _, ok := b.Authenticate("albot_madeup"); ok {
			t.Fatal("a made-up token was accepted")
		}
	}
	if n := b.Stats().TokenLookups; n != 1 {
		t.Fatalf("%d lookups of one made-up token, want 1", n)
	}
	tok, err := a.AddBot(context.Background(), "later", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Authenticate(tok); !ok {
		t.Fatal("a token made after the misses was refused")
	}
}

// What changes a token while a lookup of it is between its read of the
// store and its put is not undone: a revocation leaves it refused, a
// narrowing (its session deleted) leaves it narrowed.
func TestChangesDuringALookupStand(t *testing.T) {
	t.Parallel()
	a, b := clusterPair(t)
	ctx := context.Background()
	for _, id := range []string{"x", "y"} {
		if _, _, err := a.CreateSession(ctx, id, wire.SessionCreate{}); err != nil {
			t.Fatal(err)
		}
	}
	gone, err := a.AddBot(ctx, "gone", nil)
	if err != nil {
		t.Fatal(err)
	}
	narrow, err := a.AddBot(ctx, "narrow", []string{"x", "y"})
	if err != nil {
		t.Fatal(err)
	}
	hook := func(f func()) {
		var once sync.Once
		b.testHookTokenRead = func() { once.Do(f) }
	}

	hook(func() {
		if _, err := b.RemoveBot(ctx, "gone"); err != nil {
			t.Error(err)
		}
	})
	if _, ok := b.Authenticate(gone); ok {
		t.Fatal("a token revoked during its lookup was accepted")
	}
	if _, ok := b.Authenticate(gone); ok {
		t.Fatal("a token revoked during its lookup was accepted the second time")
	}

	hook(func() {
		if _, _, err := b.DeleteSession(ctx, "x"); err != nil {
			t.Error(err)
		}
	})
	p, ok := b.Authenticate(narrow)
	if !ok || !slices.Equal(p.Sessions, []string{"y"}) {
		t.Fatalf("a token narrowed during its lookup: %+v %v, want the sessions [y]", p, ok)
	}
}
