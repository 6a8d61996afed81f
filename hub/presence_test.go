package hub

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"albedo/wire"
)

// presenceWhere waits for r's presence push that ok accepts.
func presenceWhere(t *testing.T, r *reader, ok func(*wire.PresencePush) bool) *wire.PresencePush {
	t.Helper()
	return r.next(t, func(f wire.Frame) bool { return f.Op == wire.PushPresence && ok(f.Presence) }).Presence
}

// Presence lists people, not connections: one entry per identity with its
// devices, in the order they came, following joins and leaves.
func TestPresenceListsPeople(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	mustCreate(t, h, "s")
	ann := ConnInfo{Name: "ann", Role: wire.TokenMember, AuthorID: "m-ann", Device: "term"}
	a := newReader(t, h.Connect(ann))
	subscribe(a.c, wire.Sub{Session: "s"})
	presenceWhere(t, a, func(p *wire.PresencePush) bool { return len(p.People) == 1 && p.People[0].Name == "ann" })

	phone := ann
	phone.Device = "phone"
	a2 := h.Connect(phone)
	subscribe(a2, wire.Sub{Session: "s"})
	b := h.Connect(ConnInfo{Name: "bob", Role: wire.TokenMember, AuthorID: "m-bob"})
	subscribe(b, wire.Sub{Session: "s"})
	p := presenceWhere(t, a, func(p *wire.PresencePush) bool { return p.Viewers == 3 })
	if len(p.People) != 2 || p.People[0].ID != "m-ann" || p.People[0].Devices != 2 || p.People[1].ID != "m-bob" || p.People[1].Devices != 1 || p.More != 0 {
		t.Fatalf("ann on two devices and bob: %+v", p)
	}
	a2.Close()
	p = presenceWhere(t, a, func(p *wire.PresencePush) bool { return p.Viewers == 2 })
	if len(p.People) != 2 || p.People[0].Devices != 1 {
		t.Fatalf("after ann's phone left: %+v", p)
	}
	b.Close()
	presenceWhere(t, a, func(p *wire.PresencePush) bool {
		return p.Viewers == 1 && len(p.People) == 1 && p.People[0].Name == "ann"
	})
}

// However large the audience, a presence push lists at most
// MaxPresencePeople people and counts the rest; a crowd of one link's
// viewers is one entry.
func TestPresenceIsBounded(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	mustCreate(t, h, "s")
	r := newReader(t, h.Connect(ConnInfo{Name: "owner", Role: wire.TokenOwner, AuthorID: "owner"}))
	subscribe(r.c, wire.Sub{Session: "s"})
	const people, links = 100, 50
	for i := range people {
		subscribe(h.Connect(ConnInfo{Name: fmt.Sprint("p", i), Role: wire.TokenMember, AuthorID: fmt.Sprint("m", i)}), wire.Sub{Session: "s"})
	}
	for range links {
		subscribe(h.Connect(ConnInfo{Name: "viewer", Role: wire.TokenViewer, AuthorID: "viewer"}), wire.Sub{Session: "s"})
	}
	p := presenceWhere(t, r, func(p *wire.PresencePush) bool { return p.Viewers == 1+people+links })
	if len(p.People) != wire.MaxPresencePeople || p.More != 1+people+1-wire.MaxPresencePeople || p.People[0].Name != "owner" {
		t.Fatalf("a crowd: %d listed, %d more, first %+v", len(p.People), p.More, p.People[0])
	}
	if n := len(wire.Encode(p)); n > 8<<10 {
		t.Fatalf("a presence push of %d bytes", n)
	}
	// The whole list, a page at a time, on request.
	var all []wire.Person
	for from := 0; ; {
		page, next, ok := r.c.People("s", from)
		if !ok || len(page) > wire.MaxPeoplePage {
			t.Fatalf("a page from %d: %d people, ok %v", from, len(page), ok)
		}
		all = append(all, page...)
		if next == 0 {
			break
		}
		from = next
	}
	if len(all) != 1+people+1 || all[0].Name != "owner" || all[len(all)-1].Name != "viewer" || all[len(all)-1].Devices != links {
		t.Fatalf("paged through %d people, first %+v, last %+v", len(all), all[0], all[len(all)-1])
	}
	if _, _, ok := r.c.People("nosuch", 0); ok {
		t.Fatal("people of a session not subscribed")
	}
}

// A typing mark shows on the person, and lapses on its own with a push
// that says so.
func TestPresenceShowsTyping(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	mustCreate(t, h, "s")
	r := newReader(t, h.Connect(ConnInfo{Name: "owner", Role: wire.TokenOwner, AuthorID: "owner"}))
	subscribe(r.c, wire.Sub{Session: "s"})
	ann := h.Connect(ConnInfo{Name: "ann", Role: wire.TokenMember, AuthorID: "m-ann"})
	subscribe(ann, wire.Sub{Session: "s"})
	presenceWhere(t, r, func(p *wire.PresencePush) bool { return len(p.People) == 2 })
	ann.Typed("s")
	start := time.Now()
	p := presenceWhere(t, r, func(p *wire.PresencePush) bool { return len(p.People) == 2 && p.People[1].Typing })
	if p.People[0].Typing {
		t.Fatalf("the owner shows as typing: %+v", p)
	}
	presenceWhere(t, r, func(p *wire.PresencePush) bool { return len(p.People) == 2 && !p.People[1].Typing })
	if since := time.Since(start); since < wire.TypingMS*time.Millisecond*9/10 {
		t.Fatalf("the typing mark lapsed after %v", since)
	}
}

// A crowd forming on one session costs each watcher a status and a
// presence push per presenceEvery, not one per join: 300 joins in a burst
// reach an early watcher as a few pushes of each.
func TestCrowdJoinsAreCoalesced(t *testing.T) {
	t.Parallel()
	h, r := watchedHub(t)
	const n = 300
	start := time.Now()
	for i := range n {
		subscribe(h.Connect(ConnInfo{Name: fmt.Sprint("p", i), Role: wire.TokenMember, AuthorID: fmt.Sprint("m", i)}), wire.Sub{Session: "s"})
	}
	statuses, presences := 0, 0
	r.next(t, func(f wire.Frame) bool {
		switch f.Op {
		case wire.PushStatus:
			statuses++
		case wire.PushPresence:
			presences++
			return f.Presence.Viewers == n+1
		}
		return false
	})
	most := int(time.Since(start)/presenceEvery) + 3
	if statuses > most || presences > most {
		t.Fatalf("%d joins in %v reached a watcher as %d statuses and %d presences (at most %d each)", n, time.Since(start), statuses, presences, most)
	}
}

// A crowd's presence is marked less often the larger it is
// (presenceInterval): with 10 000 cursors on a node, joins paced over a
// second reach a watcher as one push or two, where at presenceEvery they
// would be four or more. Each marking writes to every cursor.
func TestCrowdPresenceSlowsWithItsSize(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	mustCreate(t, h, "s")
	const crowd = 10000
	for range crowd {
		subscribe(h.Connect(ConnInfo{Name: "viewer", Role: wire.TokenViewer, AuthorID: "viewer"}), wire.Sub{Session: "s"})
	}
	r := newReader(t, h.Connect(ConnInfo{Name: "owner", Role: wire.TokenOwner, AuthorID: "owner"}))
	subscribe(r.c, wire.Sub{Session: "s"})
	r.next(t, func(f wire.Frame) bool { return f.Op == wire.PushPresence })
	start := time.Now()
	tick := time.NewTicker(20 * time.Millisecond) // the joins' pace: load, not a synchronisation
	defer tick.Stop()
	const joins = 50
	for i := range joins {
		<-tick.C
		subscribe(h.Connect(ConnInfo{Name: fmt.Sprint("p", i), Role: wire.TokenMember, AuthorID: fmt.Sprint("m", i)}), wire.Sub{Session: "s"})
	}
	presences := 0
	r.next(t, func(f wire.Frame) bool {
		if f.Op == wire.PushPresence {
			presences++
			return f.Presence.Viewers == crowd+joins+1
		}
		return false
	})
	interval := time.Duration(crowd) * presencePerCursor
	if most := int(time.Since(start)/interval) + 2; presences > most {
		t.Fatalf("%d joins in %v reached a watcher as %d presences (at most %d at one per %v)", joins, time.Since(start), presences, most, interval)
	}
}

// watchedHub is a hub with a session "s" that the owner watches, past
// the owner's first presence push.
func watchedHub(t *testing.T) (*Hub, *reader) {
	t.Helper()
	h := newTestHub(t, Options{})
	mustCreate(t, h, "s")
	r := newReader(t, h.Connect(ConnInfo{Name: "owner", Role: wire.TokenOwner, AuthorID: "owner"}))
	subscribe(r.c, wire.Sub{Session: "s"})
	r.next(t, func(f wire.Frame) bool { return f.Op == wire.PushPresence })
	return h, r
}

// A change of viewers moves the status's count and the people together:
// a watcher gets both in one batch (one write), never a status alone
// ahead of the presence push that waits for its interval. A crowd
// forming is a marking of every cursor per interval, and each marking
// was two writes to every one of them.
func TestViewersStatusLeavesWithPresence(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	mustCreate(t, h, "s")
	c := h.Connect(ConnInfo{Name: "owner", Role: wire.TokenOwner, AuthorID: "owner"})
	t.Cleanup(c.Close)
	wake := wakes(c)
	subscribe(c, wire.Sub{Session: "s"})
	// The owner's writer runs late, as a loaded daemon's do: its first
	// presence push leaves well after the session's marking, so the next
	// marking finds the owner inside its interval (presenceEvery).
	<-time.After(presenceEvery / 2)
	if s, p, _ := countPushes(fillBatch(t, c, wake)); s == 0 || p == 0 {
		t.Fatalf("the first batch after subscribing: %d statuses, %d presences", s, p)
	}
	subscribe(h.Connect(ConnInfo{Name: "bob", Role: wire.TokenMember, AuthorID: "m-bob"}), wire.Sub{Session: "s"})
	for {
		statuses, presences, viewers := countPushes(fillBatch(t, c, wake))
		if statuses > 0 && presences == 0 {
			t.Fatalf("a status (%d viewers) left without the presence push", viewers)
		}
		if presences > 0 {
			if viewers != 2 {
				t.Fatalf("the presence push came with a status of %d viewers, not 2", viewers)
			}
			return
		}
	}
}

// fillBatch waits for c's next batch (wake is its wakes) and decodes it.
func fillBatch(t *testing.T, c *Conn, wake <-chan struct{}) []wire.Frame {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		buf, err := c.Fill(context.Background(), nil, 64<<10)
		if err != nil {
			t.Fatal(err)
		}
		if len(buf) > 0 {
			var fs []wire.Frame
			for line := range bytes.SplitSeq(buf, []byte{'\n'}) {
				f, err := wire.DecodeFrame(line)
				if err != nil {
					t.Fatalf("frame %q: %v", line, err)
				}
				fs = append(fs, f)
			}
			return fs
		}
		select {
		case <-wake:
		case <-deadline:
			t.Fatal("no batch in 10 s")
		}
	}
}

// countPushes counts a batch's status and presence pushes, with the
// viewers of its last status.
func countPushes(fs []wire.Frame) (statuses, presences, viewers int) {
	for _, f := range fs {
		switch f.Op {
		case wire.PushStatus:
			statuses++
			viewers = f.Status.Viewers
		case wire.PushPresence:
			presences++
		}
	}
	return statuses, presences, viewers
}
