package term

import (
	"slices"
	"testing"
	"time"

	"albedo/client"
	"albedo/wire"
)

// The sidebar follows the feed: a first page starts it again but for the
// session in front of the person; changes move sessions to their place
// and carry the store's unread counts (99+ past the feed's count), but
// never onto the focused session; gone ones leave; a read elsewhere sets a
// session's count; the sessions kept subscribed are the focused one and
// the last few focused.
func TestSidebarFollowsTheFeed(t *testing.T) {
	t.Parallel()
	m := NewModel(90, 20)
	item := func(id string, ago time.Duration, unread int) wire.FeedItem {
		return wire.FeedItem{ID: id, Title: id, At: t0.Add(-ago), Unread: unread}
	}
	m.Feed(client.FeedUpdate{Start: true, Sessions: []wire.FeedItem{item("a", time.Hour, 3), item("b", 2*time.Hour, 0)}, Next: "more"})
	if got := ids(m); !slices.Equal(got, []string{"a", "b"}) || m.Focused().ID != "a" || m.Focused().Unread != 0 {
		t.Fatalf("first page: %v, focus %s", got, m.Focused().ID)
	}
	m.Feed(client.FeedUpdate{Sessions: []wire.FeedItem{item("c", 0, wire.MaxUnread), item("a", 0, 5)}})
	if got := ids(m); !slices.Equal(got, []string{"a", "c", "b"}) && !slices.Equal(got, []string{"c", "a", "b"}) {
		t.Fatalf("after changes: %v", got)
	}
	if m.session("a").Unread != 0 || m.session("c").Unread != wire.MaxUnread {
		t.Fatalf("unread: a %d (focused), c %d", m.session("a").Unread, m.session("c").Unread)
	}
	if !contains(screen(t, m), "(99+)") {
		t.Fatalf("c's count as drawn:\n%v", screen(t, m))
	}
	m.Feed(client.FeedUpdate{Read: &wire.ReadPush{Session: "c", Offset: 9, Unread: 1}})
	if m.session("c").Unread != 1 {
		t.Fatalf("c after a read elsewhere: %d", m.session("c").Unread)
	}
	m.Feed(client.FeedUpdate{Gone: []string{"b"}})
	if m.session("b") != nil {
		t.Fatal("b is gone but listed")
	}
	if cur, ok := m.WantMore(); !ok || cur != "more" {
		t.Fatalf("near the end, the next page: %q %v", cur, ok)
	}
	if _, ok := m.WantMore(); ok {
		t.Fatal("the next page asked for twice")
	}
	for _, id := range []string{"c", "a", "c"} {
		m.setFocus(slices.IndexFunc(m.Sessions, func(s *SessionView) bool { return s.ID == id }))
	}
	if got := m.Recent(); !slices.Equal(got, []string{"c", "a"}) {
		t.Fatalf("recent: %v", got)
	}
	// A new start keeps the focused session, whatever the page holds.
	m.Feed(client.FeedUpdate{Start: true, Sessions: []wire.FeedItem{item("d", 0, 0)}})
	if got := ids(m); !slices.Contains(got, "c") || !slices.Contains(got, "d") || len(got) != 2 {
		t.Fatalf("after a new start: %v", got)
	}
}
