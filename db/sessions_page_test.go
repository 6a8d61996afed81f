package db

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestSessionsPagesWalkTheList walks the list of sessions a few at a time,
// on each backend: every session comes once, in the order of their ids,
// and more is false only on the last page — also when sessions become
// active during the walk, which in an order by activity would move them
// ahead of the pages read. only keeps a token's sessions.
func TestSessionsPagesWalkTheList(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, target string) {
		ctx := context.Background()
		d := openOn(t, target, Options{})
		var want []string
		for i := range 7 {
			id := fmt.Sprintf("s%d", 6-i) // made in the reverse of their ids' order
			createSession(t, d, id)
			want = append([]string{id}, want...)
		}
		for _, size := range []int{1, 2, 3, 7, 100} {
			var walked []string
			after := ""
			for {
				page, more, err := d.SessionsPage(ctx, after, size, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) > size || (more && len(page) != size) {
					t.Fatalf("size %d: a page of %d, more %v", size, len(page), more)
				}
				for _, s := range page {
					walked = append(walked, s.ID)
					// The walk's sessions are active as it goes: the one
					// read last, and the oldest.
					if _, err := appendText(ctx, d, s.ID, "x"); err != nil {
						t.Fatal(err)
					}
					if _, err := appendText(ctx, d, "s6", "x"); err != nil {
						t.Fatal(err)
					}
				}
				if !more {
					break
				}
				after = page[len(page)-1].ID
			}
			if !slices.Equal(walked, want) {
				t.Fatalf("pages of %d walked %v, want %v", size, walked, want)
			}
		}
		only := []string{"s4", "s0", "gone"}
		page, more, err := d.SessionsPage(ctx, "", 1, only, nil)
		if err != nil || !more || len(page) != 1 || page[0].ID != "s0" {
			t.Fatalf("only, first page: %v more %v, %v", page, more, err)
		}
		if page, more, err = d.SessionsPage(ctx, "s0", 1, only, nil); err != nil || more || len(page) != 1 || page[0].ID != "s4" {
			t.Fatalf("only, second page: %v more %v, %v", page, more, err)
		}
		if page, more, err = d.SessionsPage(ctx, "", 5, []string{}, nil); err != nil || more || len(page) != 0 {
			t.Fatalf("only none: %v more %v, %v", page, more, err)
		}
	})
}

// A page reads its own sessions through the primary key, not every
// session: no scan of sessions, no sort.
func TestSessionsPageReadsOnlyItsPage(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{})
	yes := true
	for name, q := range map[string]string{
		"all":      d.sessionsPageQuery("s1", 100, nil, nil).String(),
		"only":     d.sessionsPageQuery("s1", 100, []string{"s2", "s3"}, nil).String(),
		"archived": d.sessionsPageQuery("s1", 100, nil, &yes).String(),
	} {
		got := queryPlan(t, d, q)
		if strings.Contains(got, "SCAN s ") || strings.Contains(got, "TEMP B-TREE") || !strings.Contains(got, "SEARCH s USING INDEX sqlite_autoindex_sessions_1") {
			t.Errorf("%s: plan %s", name, got)
		}
	}
}
