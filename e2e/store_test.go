//go:build !e2e_only || e2e_core

package e2e

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/wire"
)

// Posts of many writers, each one after another to its own session, while
// the daemon is killed twice with SIGKILL: the batches hold one post each of
// many sessions, so their events go through the store's log and are folded
// into events every 1 024 (db/fold.go), and the kills land with the log
// part full and folds behind it. Every post's order is the next one of its
// session whatever the kills did (a post resent after a kill gets its first
// receipt if it was committed, a new one if not), and each session's
// history reads back whole, in order, once each.
func TestPostsSurviveKillsAcrossFolds(t *testing.T) {
	parallelHeavy(t)
	fx := newFixture(t, fixtureOpts{})
	const writers, posts = 12, 400
	sessions := make([]wire.Session, writers)
	for w := range sessions {
		s, err := fx.c.CreateSession(fx.ctx, fmt.Sprint("load-", w), wire.SessionCreate{})
		if err != nil {
			t.Fatal(err)
		}
		sessions[w] = s
	}
	tok, err := fx.c.AddBot(fx.ctx, "loader", nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([][]string, writers) // each writer's input ids, in order
	var receipted atomic.Int64
	kills := []int64{writers * posts / 3, 2 * writers * posts / 3}
	killed := make(chan int64, len(kills))
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		bc, err := client.New(client.Options{Home: fx.home, Token: tok.Token})
		if err != nil {
			t.Fatal(err)
		}
		st := bc.Stream(client.StreamOptions{})
		defer st.Close()
		wg.Go(func() {
			s := sessions[w].ID
			for i := range posts {
				id := uuid.Must(uuid.NewV7()).String()
				r, err := st.Post(fx.ctx, s, id, fmt.Sprint(i))
				if err != nil {
					errs <- fmt.Errorf("writer %d, post %d: %w", w, i, err)
					return
				}
				if r.Order != int64(i+1) {
					errs <- fmt.Errorf("writer %d, post %d: order %d, want %d", w, i, r.Order, i+1)
					return
				}
				ids[w] = append(ids[w], id)
				if n := receipted.Add(1); n == kills[0] || n == kills[1] {
					killed <- n
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for range kills {
		select {
		case n := <-killed:
			fx.d.kill()
			fx.d = startDaemon(t, fx.home)
			t.Logf("killed and restarted after %d receipts", n)
		case err := <-errs:
			t.Fatal(err)
		case <-done:
			t.Fatal("the writers ended before the kills")
		}
	}
	<-done
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	for w, s := range sessions {
		var got []wire.Event
		for after := int64(0); ; {
			page, err := fx.c.History(fx.ctx, s.ID, after, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Events) == 0 {
				break
			}
			got = append(got, page.Events...)
			after = page.Events[len(page.Events)-1].Offset
		}
		if len(got) != posts {
			t.Fatalf("session %s: %d events, want %d", s.ID, len(got), posts)
		}
		for i, e := range got {
			if e.Offset != int64(i+1) || e.Text != fmt.Sprint(i) || e.InputID != ids[w][i] {
				t.Fatalf("session %s, event %d: offset %d text %q input %s; want %d %q %s",
					s.ID, i, e.Offset, e.Text, e.InputID, i+1, fmt.Sprint(i), ids[w][i])
			}
		}
	}
}
