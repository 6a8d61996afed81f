package hub

import (
	"context"
	"testing"

	"albedo/db"
	"albedo/hub/access"
	"albedo/wire"
)

// A search by a caller who may read little of what matches asks the
// store at most twice, however many hits it has to pass over: each ask
// evaluates the query's match whole, and a member's search among 200 000
// others' messages cost 12 s when it asked once for every 50 hits.
func TestSearchAsksTheStoreAtMostTwice(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	ctx := context.Background()
	for _, id := range []string{"mine", "also-mine", "other"} {
		mustCreate(t, h, id)
	}
	msg := wire.Event{Type: wire.EventMessage, Role: wire.RoleUser, Author: "ann", Text: "needle"}
	if _, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		_, err := tx.Append(ctx, "mine", msg)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		for range 600 {
			if _, err := tx.Append(ctx, "other", msg); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	bot := access.Principal{Role: wire.TokenBot, Name: "b", Sessions: []string{"mine", "also-mine"}}
	before := h.stats.searches.Load()
	res, err := h.Search(ctx, bot, "needle", "", "", 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 1 || res.Results[0].Session != "mine" {
		t.Fatalf("results %+v, want mine's one message", res.Results)
	}
	if asked := h.stats.searches.Load() - before; asked > 2 {
		t.Fatalf("the search asked the store %d times", asked)
	}
}
