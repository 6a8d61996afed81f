package client

import (
	"context"
	"fmt"
	"testing"
	"time"

	"albedo/wire"
)

// TestSessionsReadsEveryPage: Sessions follows the list's pages to its
// end, and SessionsPage reads one page with its cursor. Not parallel: it
// sets the package's sessionsPageSize, and emptyPlace changes the process's
// working directory and environment.
func TestSessionsReadsEveryPage(t *testing.T) {
	emptyPlace(t)
	srv := startServer(t, false)
	c, err := New(Options{URL: srv.url(), Token: srv.token})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 5 {
		if _, err := c.CreateSession(ctx, fmt.Sprintf("s%d", i), wire.SessionCreate{}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := c.SessionsPage(ctx, "", 2)
	if err != nil || len(page.Sessions) != 2 || page.Next == "" {
		t.Fatalf("first page of 2: %+v, %v", page, err)
	}
	if rest, err := c.SessionsPage(ctx, page.Next, 10); err != nil || len(rest.Sessions) != 3 || rest.Next != "" {
		t.Fatalf("the rest: %+v, %v", rest, err)
	}
	defer func(n int) { sessionsPageSize = n }(sessionsPageSize)
	sessionsPageSize = 2
	all, err := c.Sessions(ctx)
	if err != nil || len(all) != 5 {
		t.Fatalf("Sessions in pages of 2: %d sessions, %v", len(all), err)
	}
	for i, s := range all {
		if want := fmt.Sprintf("s%d", 4-i); s.ID != want {
			t.Fatalf("session %d is %s, want %s (most recently made first)", i, s.ID, want)
		}
	}
	// ArchivedSessions walks the list of the archived alone.
	for _, id := range []string{"s1", "s3"} {
		yes := true
		s, err := c.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.PatchSession(ctx, id, s.ETag, wire.SessionPatch{Archived: &yes}); err != nil {
			t.Fatal(err)
		}
	}
	archived, err := c.ArchivedSessions(ctx)
	if err != nil || len(archived) != 2 || archived[0].ID != "s3" || archived[1].ID != "s1" {
		t.Fatalf("ArchivedSessions: %+v, %v", archived, err)
	}
}
