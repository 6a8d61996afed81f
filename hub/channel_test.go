package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"albedo/db"
	"albedo/wire"
)

// metaOf takes a committed event's Meta as it is and decodes only events
// read back from storage (the JSON here would not decode).
func TestMetaOfCommittedEventsIsNotDecoded(t *testing.T) {
	t.Parallel()
	e := db.Event{Type: wire.EventMessage, JSON: []byte("not json"),
		Meta: db.Meta{Role: wire.RoleUser, InputID: "i1", TurnID: "t1"}}
	if m := metaOf(e); m.Role != wire.RoleUser || m.InputID != "i1" || m.TurnID != "t1" || m.Type != wire.EventMessage {
		t.Fatalf("from Meta: %+v", m)
	}
	stored := db.Event{Type: wire.EventTurn, JSON: []byte(`{"type":"turn","turn_id":"t1","state":"completed"}`)}
	if m := metaOf(stored); !m.ends() || m.TurnID != "t1" {
		t.Fatalf("decoded: %+v", m)
	}
}

// BenchmarkMetaOfReply: what the commit hook spends on a 64 KiB reply
// message, committed (Meta) and read back from storage (decoded).
func BenchmarkMetaOfReply(b *testing.B) {
	ev := wire.Event{Type: wire.EventMessage, Role: wire.RoleAssistant, TurnID: "t1", InputID: "i1",
		State: wire.MessageComplete, Text: strings.Repeat("lorem ipsum ", 64<<10/12)}
	js, _ := json.Marshal(ev)
	for _, bc := range []struct {
		name string
		e    db.Event
	}{
		{"committed", db.Event{Type: ev.Type, JSON: js, Meta: db.Meta{Role: ev.Role, InputID: ev.InputID, TurnID: ev.TurnID, State: ev.State}}},
		{"stored", db.Event{Type: ev.Type, JSON: js}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				_ = metaOf(bc.e)
			}
		})
	}
}

// A session's cursors are a slice, each knowing its place: connections
// leaving in any order leave the others listed once each, at their index,
// and the session's viewers are those still there.
func TestChannelSubsLeaveInAnyOrder(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	mustCreate(t, h, "s")
	ch, werr := h.channel(context.Background(), "s")
	if werr != nil {
		t.Fatal(werr)
	}
	conns := make([]*Conn, 7)
	for i := range conns {
		conns[i] = h.Connect(ConnInfo{Name: fmt.Sprint("c", i), AuthorID: fmt.Sprint("c", i)})
		subscribe(conns[i], wire.Sub{Session: "s"})
	}
	check := func(left map[*Conn]bool) {
		t.Helper()
		ch.mu.Lock()
		defer ch.mu.Unlock()
		seen := map[*Conn]bool{}
		for i, s := range ch.subs {
			if s.at != i || seen[s.conn] || !left[s.conn] {
				t.Fatalf("cursor %d: at %d, listed before %v, still connected %v", i, s.at, seen[s.conn], left[s.conn])
			}
			seen[s.conn] = true
		}
		if people, _ := ch.people.first(len(conns), time.Now()); len(seen) != len(left) || len(people) != len(left) {
			t.Fatalf("%d cursors and %d people for %d connections", len(seen), len(people), len(left))
		}
	}
	left := map[*Conn]bool{}
	for _, c := range conns {
		left[c] = true
	}
	check(left)
	// A cursor from the middle (3: 6 moves into its place), the first (0:
	// 5 moves there), the one in the last place (4), then the rest.
	for _, i := range []int{3, 0, 4, 6, 1, 5, 2} {
		conns[i].Close()
		delete(left, conns[i])
		check(left)
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.subs != nil {
		t.Fatalf("no cursor left, but an array of %d", cap(ch.subs))
	}
}
