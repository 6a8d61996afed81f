package hub

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"albedo/db"
	"albedo/hub/peer"
	"albedo/wire"
)

// The events of a notice come out the same whether it carries their kinds
// or only their JSON, and with kinds their JSON is not read: the node
// that committed them says what drives turns.
func TestNoticeEvents(t *testing.T) {
	t.Parallel()
	committed := []wire.Event{
		{Type: wire.EventMessage, Role: wire.RoleUser, Text: "hi", InputID: "in1", TurnID: "t1"},
		{Type: wire.EventTurn, TurnID: "t1", State: wire.TurnStarted},
		{Type: wire.EventTurn, TurnID: "t1", State: wire.TurnCompleted},
		{Type: wire.EventSettings},
	}
	var evs []db.Event
	for i, ev := range committed {
		ev.Offset = int64(i + 1)
		raw, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, db.Event{Session: "s", Offset: ev.Offset, Type: ev.Type, JSON: raw,
			Meta: db.Meta{Role: ev.Role, InputID: ev.InputID, TurnID: ev.TurnID, State: ev.State}})
	}
	n := peer.Commit{Session: "s", Events: evs}.AsEvents()
	bare := n
	bare.Kinds = nil
	type result struct {
		Types    []wire.EventType
		Ended    []string
		Settings bool
	}
	read := func(n peer.Events) result {
		evs, ended, settings := noticeEvents(n)
		r := result{Ended: ended, Settings: settings}
		for _, e := range evs {
			r.Types = append(r.Types, e.Type)
		}
		return r
	}
	want := result{Types: []wire.EventType{wire.EventMessage, wire.EventTurn, wire.EventTurn, wire.EventSettings}, Ended: []string{"t1"}, Settings: true}
	if got := read(n); !reflect.DeepEqual(got, want) {
		t.Fatalf("with kinds: %+v, want %+v", got, want)
	}
	if got := read(bare); !reflect.DeepEqual(got, want) {
		t.Fatalf("without kinds: %+v, want %+v", got, want)
	}
	unreadable := n
	unreadable.Events = make([]json.RawMessage, len(n.Events))
	for i := range unreadable.Events {
		unreadable.Events[i] = json.RawMessage("not json")
	}
	if got := read(unreadable); !reflect.DeepEqual(got, want) {
		t.Fatalf("with kinds, the JSON was read: %+v", got)
	}
}

// Another node's presence marks this node's cursors when it changes, not
// when the node only repeats it (every heartbeat): a repeat to a crowd
// would be a write to every viewer every two seconds.
func TestRepeatedRemotePresenceMarksNothing(t *testing.T) {
	t.Parallel()
	h, r := watchedHub(t)
	ann := peer.Presence{Node: "n2", Session: "s", People: []wire.Person{{ID: "m-ann", Name: "ann", Role: wire.TokenMember, Devices: 1}}, Total: 1, Viewers: 1}
	h.onPresence(ann)
	r.next(t, func(f wire.Frame) bool { return f.Op == wire.PushPresence && f.Presence.Viewers == 2 })

	// A marking sets the channel's presenceAt, or presenceDue when it
	// waits for the interval; the reader does not touch either.
	ch := h.served("s")
	marks := func() (time.Time, bool) {
		ch.mu.Lock()
		defer ch.mu.Unlock()
		return ch.presenceAt, ch.presenceDue
	}
	// The push above may carry ann before the marking her notice put off
	// (presenceDue) has run: wait for that one first.
	at0, due := marks()
	for deadline := time.Now().Add(10 * time.Second); due; at0, due = marks() {
		if time.Now().After(deadline) {
			t.Fatal("a marking put off never ran")
		}
		time.Sleep(5 * time.Millisecond) // polling under a deadline
	}
	h.onPresence(ann) // the heartbeat's repeat
	if at, due := marks(); at != at0 || due {
		t.Fatal("a repeat of the same presence marked the cursors")
	}
	two := ann
	two.People = []wire.Person{{ID: "m-ann", Name: "ann", Role: wire.TokenMember, Devices: 2}}
	two.Viewers = 2
	h.onPresence(two)
	if at, due := marks(); at == at0 && !due {
		t.Fatal("a change of another node's presence marked nothing")
	}
	r.next(t, func(f wire.Frame) bool { return f.Op == wire.PushPresence && f.Presence.Viewers == 3 })
}

// A repeat notice's sessions are each taken as that node's presence
// notice: their node is the repeat's.
func TestRepeatNoticeIsEachSessionsPresence(t *testing.T) {
	t.Parallel()
	h, r := watchedHub(t)
	ann := []wire.Person{{ID: "m-ann", Name: "ann", Role: wire.TokenMember, Devices: 1}}
	h.onRepeat(peer.Repeat{Node: "n2", Sessions: []peer.Presence{
		{Session: "not-served", People: ann, Total: 1, Viewers: 1},
		{Session: "s", People: ann, Total: 1, Viewers: 1},
	}})
	r.next(t, func(f wire.Frame) bool { return f.Op == wire.PushPresence && f.Presence.Viewers == 2 })
	ch := h.served("s")
	ch.mu.Lock()
	_, ok := ch.remoteViewers["n2"]
	ch.mu.Unlock()
	if !ok {
		t.Fatal("the repeat's viewers are not node n2's")
	}
}
