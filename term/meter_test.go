package term

import (
	"testing"

	"albedo/wire"
)

// The meter starts from the session's window and cost to date, takes the
// fill of each turn that reports its tokens and adds each cost once; a
// session with no window or no prices says only what it knows.
func TestMeterFollowsTurns(t *testing.T) {
	m := NewModel(100, 30)
	s := newSessionView(wire.Session{ID: "s"})
	m.Sessions = append(m.Sessions, s)
	m.setFocus(0)
	if id, ok := m.WantInfo(); !ok || id != "s" {
		t.Fatalf("WantInfo: %q %v", id, ok)
	}
	if _, again := m.WantInfo(); again {
		t.Fatal("WantInfo asked twice")
	}
	if got := s.meterText(); got != "" {
		t.Fatalf("before the session's info: %q", got)
	}
	cost := 0.5
	m.info(resInfo{Session: wire.Session{ID: "s", ContextTokens: 200_000, Usage: &wire.UsageTotal{Cost: &cost}}})
	if got := s.meterText(); got != "$0.5000" {
		t.Fatalf("with the cost to date: %q", got)
	}
	end := wire.Event{Offset: 4, Type: wire.EventTurn, State: wire.TurnCompleted}
	turnCost := 0.0123
	end.SetUsage(&wire.Usage{InputTokens: 12_000, OutputTokens: 345, Cost: &turnCost})
	m.event(s, end)
	m.event(s, end) // the same event again (a reattach's replay) counts once
	if got := s.meterText(); got != "ctx 12.3k/200k (6%) · $0.5123" {
		t.Fatalf("after a turn: %q", got)
	}
	free := newSessionView(wire.Session{ID: "free"})
	free.meter.asked = true
	m.info(resInfo{Session: wire.Session{ID: "free"}})
	free.metered(wire.Event{Type: wire.EventTurn, Usage: []byte("null")})
	if got := free.meterText(); got != "" {
		t.Fatalf("a session with no window and no usage: %q", got)
	}
}
