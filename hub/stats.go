package hub

import (
	"context"
	"sync/atomic"
	"time"

	"albedo/db"
	"albedo/wire"
)

// Stats is what the hub holds and has done, for the daemon's metrics (api
// exports it to Prometheus).
type Stats struct {
	Conns      int   // connections registered with the hub
	Subs       int   // their subscriptions (channels of connections)
	Sessions   int   // sessions loaded in memory (watched, or with turns)
	Deliveries int64 // event frames handed to connections' writers since start
	// TokenLookups counts the tokens this node did not know and looked up
	// in the store (a cluster's); a hash the store did not have is looked
	// up once.
	TokenLookups int64
	// Turns are the durations of the turns this daemon ran, from start
	// to committed end, by final state (completed, interrupted, failed).
	Turns map[string]db.HistogramSnapshot
}

// hubStats are the counters the hub keeps for Stats. Their methods may be
// called from any goroutine.
type hubStats struct {
	deliveries   atomic.Int64
	tokenLookups atomic.Int64
	turns        map[string]*db.Histogram // static after Open
}

// turnBounds are the buckets of a turn's duration, in seconds: an echo
// turn takes milliseconds, a model's reply seconds to minutes.
var turnBounds = []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

func newHubStats() hubStats {
	return hubStats{turns: map[string]*db.Histogram{
		wire.TurnCompleted:   db.NewHistogram(turnBounds...),
		wire.TurnInterrupted: db.NewHistogram(turnBounds...),
		wire.TurnFailed:      db.NewHistogram(turnBounds...),
	}}
}

// turnEnded counts a turn that ended in state after d.
func (s *hubStats) turnEnded(state string, d time.Duration) {
	if h := s.turns[state]; h != nil {
		h.Observe(d)
	}
}

// Stats reads the hub's numbers. It copies the connections under the
// hub's lock and counts each one's subscriptions under its own.
func (h *Hub) Stats() Stats {
	conns := h.Conns()
	h.mu.Lock()
	sessions := len(h.chans)
	h.mu.Unlock()
	st := Stats{Conns: len(conns), Sessions: sessions, Deliveries: h.stats.deliveries.Load(), TokenLookups: h.stats.tokenLookups.Load(), Turns: map[string]db.HistogramSnapshot{}}
	for _, c := range conns {
		c.mu.Lock()
		st.Subs += len(c.subs)
		c.mu.Unlock()
	}
	for state, hist := range h.stats.turns {
		st.Turns[state] = hist.Snapshot()
	}
	return st
}

// Ping says whether the store answers (db.Ping), for readiness checks.
func (h *Hub) Ping(ctx context.Context) error { return h.db.Ping(ctx) }
