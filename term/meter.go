package term

import (
	"encoding/json"
	"fmt"
	"math"

	"albedo/wire"
)

// The context meter and the cost so far, in the status bar: how full the
// model's context window was at the last turn (its closing event's
// context, the daemon's count, which compaction goes by, against the
// window) and what the session's turns and
// compactions cost. The window and the cost to date come with the
// session (GET, once it is focused): that total holds every event up to
// the head the GET read, so only a turn's end or compaction after that
// head adds its own, whether the history comes before the total, after
// it, or again on a reattach.

// meter is what the status bar says of a session's context and cost.
type meter struct {
	asked  bool    // its session was asked for (cmdInfo)
	window int     // the context window, tokens; 0: none (echo, a bot)
	fill   int64   // the context of the last turn that counted it (Event.Context)
	cost   float64 // USD so far
	priced bool    // some turn had a cost
	// countedTo is the newest event whose cost is counted: in the total
	// the session came with, or since (a replayed one is not again).
	// Until the total is read it counts everything: nothing is added to
	// a total not known yet.
	countedTo int64
}

// The Cmd and result that read a session's window and cost.
type (
	cmdInfo struct{ Session string }
	resInfo struct {
		Session wire.Session
		Err     error
	}
)

func (cmdInfo) isCmd() {}

// WantInfo returns the focused session's id once, for the App to read
// its window and cost.
func (m *Model) WantInfo() (string, bool) {
	s := m.Focused()
	if s == nil || s.meter.asked || m.ReadOnly {
		return "", false
	}
	s.meter.asked, s.meter.countedTo = true, math.MaxInt64
	return s.ID, true
}

// info takes a session's window and cost to date.
func (m *Model) info(r resInfo) {
	s := m.session(r.Session.ID)
	if r.Err != nil || s == nil {
		return
	}
	s.takeSettings(r.Session) // its participants, read with the rest
	s.meter.window = r.Session.ContextTokens
	if u := r.Session.Usage; u != nil && u.Cost != nil {
		s.meter.cost, s.meter.priced = *u.Cost, true
	}
	s.meter.countedTo = r.Session.Head // the total holds the events up to it
	for _, ev := range s.Events {
		if ev.Offset > s.meter.countedTo && (ev.Type == wire.EventTurn || ev.Type == wire.EventCompaction) {
			s.metered(ev) // came between the GET and its answer
		}
	}
	for i := len(s.Events) - 1; i >= 0; i-- {
		if ev := s.Events[i]; ev.Type == wire.EventTurn && ev.Context > 0 {
			s.meter.fill = int64(ev.Context)
			break
		}
	}
}

// usageOf is an event's usage, nil if it has none.
func usageOf(ev wire.Event) *wire.Usage {
	if len(ev.Usage) == 0 || string(ev.Usage) == "null" {
		return nil
	}
	var u wire.Usage
	if json.Unmarshal(ev.Usage, &u) != nil {
		return nil
	}
	return &u
}

// metered counts a new turn's end or compaction in the meter.
func (s *SessionView) metered(ev wire.Event) {
	if ev.Type == wire.EventTurn && ev.Context > 0 {
		s.meter.fill = int64(ev.Context)
	}
	u := usageOf(ev)
	if u == nil || !s.meter.asked {
		return
	}
	if u.Cost != nil && ev.Offset > s.meter.countedTo {
		s.meter.countedTo = ev.Offset
		s.meter.cost += *u.Cost
		s.meter.priced = true
	}
}

// meterText is the status bar's word on the meter: "ctx 12k/200k (6%) ·
// $0.0123", what of it is known.
func (s *SessionView) meterText() string {
	var out string
	if s.meter.window > 0 && s.meter.fill > 0 {
		out = fmt.Sprintf("ctx %s/%s (%d%%)", tokensText(s.meter.fill), tokensText(int64(s.meter.window)), s.meter.fill*100/int64(s.meter.window))
	}
	if s.meter.priced {
		if out != "" {
			out += " · "
		}
		out += fmt.Sprintf("$%.4f", s.meter.cost)
	}
	return out
}

// tokensText is a count of tokens, short: 950, 12.3k, 200k, 1.0M.
func tokensText(n int64) string {
	switch {
	case n >= 999_500:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 100_000:
		return fmt.Sprintf("%dk", (n+500)/1000)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprint(n)
}
