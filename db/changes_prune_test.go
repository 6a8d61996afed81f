package db

import (
	"context"
	"fmt"
	"testing"

	"albedo/db/pgtest"
)

// Every pruneEvery-th transaction that records changes also prunes the
// oldest; that statement, too, must succeed (it once named its parameter
// as PostgreSQL does, which bun's formatting drops, and failed the batch
// with it).
func TestChangesArePrunedAsTheyGo(t *testing.T) {
	t.Parallel()
	d := openOn(t, pgtest.Shared(t).Database(t), Options{})
	for i := range 2*pruneEvery + 1 {
		createSession(t, d, fmt.Sprint("s", i))
	}
	gen, err := d.ChangeGen(context.Background())
	if err != nil || gen < 2*pruneEvery {
		t.Fatalf("changes numbered up to %d (%v)", gen, err)
	}
}
