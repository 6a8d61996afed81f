package client

import (
	"context"
	"testing"
	"time"

	"albedo/wire"
)

// A stream that follows the feed gets its first page once, then the
// sessions that change; after the daemon restarts it resumes from its
// position (no first page again) and hears of what changed while it was
// away, the deleted ones too; FeedPage reads the pages after the first.
func TestStreamFollowsTheFeedAcrossARestart(t *testing.T) {
	t.Parallel()
	srv := startServer(t, false)
	c, err := New(Options{URL: srv.url(), Token: srv.token})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, id := range []string{"a", "b", "c"} {
		if _, err := c.CreateSession(ctx, id, wire.SessionCreate{Title: id}); err != nil {
			t.Fatal(err)
		}
	}
	updates := make(chan FeedUpdate, 64)
	st := c.Stream(StreamOptions{FeedPage: 2, Backoff: BackoffOptions{Cap: 100 * time.Millisecond},
		OnFeed: func(u FeedUpdate) { updates <- u }})
	defer st.Close()
	next := func(what string, ok func(FeedUpdate) bool) FeedUpdate {
		t.Helper()
		for {
			select {
			case u := <-updates:
				if ok(u) {
					return u
				}
			case <-ctx.Done():
				t.Fatalf("never: %s", what)
			}
		}
	}
	first := next("the first page", func(u FeedUpdate) bool { return u.Start })
	if len(first.Sessions) != 2 || first.Sessions[0].ID != "c" || first.Next == "" {
		t.Fatalf("the first page: %+v", first)
	}
	page, err := st.FeedPage(ctx, first.Next, 2)
	if err != nil || len(page.Sessions) != 1 || page.Sessions[0].ID != "a" || page.Next != "" {
		t.Fatalf("the second page: %+v %v", page, err)
	}
	if _, err := c.PutInput(ctx, "a", "0190a0b0-0000-7000-8000-000000000001", "hello"); err != nil {
		t.Fatal(err)
	}
	next("a changed", func(u FeedUpdate) bool { return len(u.Sessions) > 0 && u.Sessions[0].ID == "a" })

	srv.stop()
	srv.start()
	if err := c.DeleteSession(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateSession(ctx, "d", wire.SessionCreate{Title: "d"}); err != nil {
		t.Fatal(err)
	}
	seen, gone := map[string]bool{}, map[string]bool{}
	next("b gone and d made, resumed", func(u FeedUpdate) bool {
		if u.Start {
			t.Fatalf("the feed started again after the restart: %+v", u)
		}
		for _, it := range u.Sessions {
			seen[it.ID] = true
		}
		for _, id := range u.Gone {
			gone[id] = true
		}
		return gone["b"] && seen["d"]
	})
}
