package hub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"albedo/db"
	"albedo/db/pgtest"
	"albedo/wire"
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

// A hello's sessions not loaded yet are read together (preload) before
// its subs run: each sub then finds its channel loaded. One that does not
// exist is refused by its sub, as before, and neither it nor a sub
// refused before its read (a negative after) leaves a channel behind.
func TestAHellosSessionsLoadTogether(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c"} {
		mustCreate(t, h, id)
	}
	h.mu.Lock()
	h.chans = map[string]*channel{} // as a restarted daemon has them
	h.mu.Unlock()
	h.preload(ctx, []string{"a", "b", "a"})
	for _, id := range []string{"a", "b"} {
		if ch := h.chans[id]; ch == nil || !ch.isLoaded() {
			t.Fatalf("%s is not loaded by the preload", id)
		}
	}
	c := h.Connect(ConnInfo{Name: "u", AuthorID: "u"})
	defer c.Close()
	var got []wire.SubReply
	bad := int64(-1)
	c.Subscribe(ctx, []wire.Sub{{Session: "a"}, {Session: "c"}, {Session: "nope"}, {Session: "x", After: &bad}}, func(r []wire.SubReply) any { got = r; return r })
	if !got[0].OK || !got[1].OK || got[2].Error == nil || got[2].Error.Code != wire.CodeNotFound || got[3].Error == nil || got[3].Error.Code != wire.CodeBadRequest {
		t.Fatalf("subs answered %+v", got)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range []string{"nope", "x"} {
		if h.chans[id] != nil {
			t.Fatalf("a channel of %q is left behind", id)
		}
	}
	if ch := h.chans["c"]; ch == nil || !ch.isLoaded() {
		t.Fatal("c, preloaded by the hello, is not loaded")
	}
}
