package hub

import (
	"encoding/json"
	"strings"
	"testing"

	"albedo/api/wire"
	"albedo/db"
)

// metaOf takes a committed event's Meta as it is and decodes only events
// read back from storage (the JSON here would not decode).
func TestMetaOfCommittedEventsIsNotDecoded(t *testing.T) {
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
