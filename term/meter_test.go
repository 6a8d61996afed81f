package term

import (
	"testing"

	"albedo/wire"
)

// The meter starts from the session's window and cost to date, takes the
// fill of each turn that counts its context (the daemon's count, not the
// tokens the provider reported, which sum a turn's responses) and adds
// each cost once; a session with no window or no prices says only what
// it knows.
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
	end := wire.Event{Offset: 4, Type: wire.EventTurn, State: wire.TurnCompleted, Context: 12_345}
	turnCost := 0.0123
	end.SetUsage(&wire.Usage{InputTokens: 36_000, OutputTokens: 345, Cost: &turnCost})
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

// The session's total stands for its events up to the head the GET read:
// a history that comes after the total (late, or again on a reattach)
// adds nothing, and only a turn after that head adds its cost.
func TestMeterTotalHoldsHistoryThatComesLate(t *testing.T) {
	m := NewModel(100, 30)
	s := newSessionView(wire.Session{ID: "s"})
	m.Sessions = append(m.Sessions, s)
	m.setFocus(0)
	m.WantInfo()
	turn := func(off int64, cost float64) wire.Event {
		ev := wire.Event{Offset: off, Type: wire.EventTurn, State: wire.TurnCompleted}
		ev.SetUsage(&wire.Usage{InputTokens: 10, OutputTokens: 5, Cost: &cost})
		return ev
	}
	total := 0.0016
	m.info(resInfo{Session: wire.Session{ID: "s", Head: 6, Usage: &wire.UsageTotal{Cost: &total}}})
	for _, off := range []int64{3, 6} { // the history, after the total
		m.event(s, turn(off, 0.0008))
	}
	if got := s.meterText(); got != "$0.0016" {
		t.Fatalf("the history came after the total: %q, want $0.0016", got)
	}
	m.Unsubscribed("s") // a reattach: the same history again
	for _, off := range []int64{3, 6} {
		m.event(s, turn(off, 0.0008))
	}
	if got := s.meterText(); got != "$0.0016" {
		t.Fatalf("after a reattach: %q, want $0.0016", got)
	}
	m.event(s, turn(9, 0.0008))
	if got := s.meterText(); got != "$0.0024" {
		t.Fatalf("a turn after the head: %q, want $0.0024", got)
	}

	// A history that comes between the ask and the total counts nothing
	// of itself: the total holds it.
	early := newSessionView(wire.Session{ID: "early"})
	m.Sessions = append(m.Sessions, early)
	m.setFocus(1)
	m.WantInfo()
	m.event(early, turn(3, 0.0008))
	m.info(resInfo{Session: wire.Session{ID: "early", Head: 3, Usage: &wire.UsageTotal{Cost: &total}}})
	m.event(early, turn(6, 0.0008)) // after the head the GET read
	if got := early.meterText(); got != "$0.0024" {
		t.Fatalf("history before the total: %q, want $0.0024", got)
	}
}
