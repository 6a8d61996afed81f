package hub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"albedo/db"
	"albedo/db/pgtest"
)

// On PostgreSQL, loads that wait together are read in one query, each answered with its
// own row: a session twice, and one that does not exist (ErrNotFound).
func TestSessionLoadsAnswerEachOfABatch(t *testing.T) {
	t.Parallel()
	l := loadsOf(t, 3)
	var batch []*sessionLoad
	for _, id := range []string{"s2", "s0", "nope", "s2", "s1"} {
		batch = append(batch, &sessionLoad{id: id, done: make(chan struct{})})
	}
	l.answer(batch)
	for _, r := range batch {
		select {
		case <-r.done:
		default:
			t.Fatalf("%s: not answered", r.id)
		}
		switch {
		case r.id == "nope":
			if !errors.Is(r.err, db.ErrNotFound) {
				t.Fatalf("nope: %v, want ErrNotFound", r.err)
			}
		case r.err != nil || r.s.ID != r.id:
			t.Fatalf("%s: %q, %v", r.id, r.s.ID, r.err)
		}
	}
}

// Many loads at once on PostgreSQL, of sessions that exist and of some that do not,
// each get its own answer, whatever batches they were read in.
func TestSessionLoadsAtOnce(t *testing.T) {
	t.Parallel()
	l := loadsOf(t, 20)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 300 {
		wg.Go(func() {
			id := fmt.Sprintf("s%d", i%25) // s20…s24 do not exist
			s, err := l.get(ctx, id)
			switch {
			case i%25 >= 20:
				if !errors.Is(err, db.ErrNotFound) {
					t.Errorf("%s: %v, want ErrNotFound", id, err)
				}
			case err != nil || s.ID != id:
				t.Errorf("%s: %q, %v", id, s.ID, err)
			}
		})
	}
	wg.Wait()
}

// loadsOf is a sessionLoads on a new PostgreSQL database with sessions
// s0…s(n-1).
func loadsOf(t *testing.T, n int) *sessionLoads {
	t.Helper()
	h := openTestHub(t, pgtest.Shared(t).Database(t), Options{Node: "n"})
	for i := range n {
		mustCreate(t, h, fmt.Sprintf("s%d", i))
	}
	return newSessionLoads(context.Background(), h.db)
}
