package hub

import (
	"context"
	"sync"
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
	// PageReads counts the pages of events read from the store for a
	// cursor because its channel's ring did not hold them.
	PageReads int64
	// Turns are the durations of the turns this daemon ran, from start
	// to committed end, by final state (completed, interrupted, failed).
	Turns map[string]db.HistogramSnapshot
	// Takeovers counts the turns another node left running (it died, or
	// lost the lease) that this node committed as interrupted and went on
	// from (cluster_leases.go).
	Takeovers int64
	// Peers are the other nodes heard over NATS, by name.
	Peers map[string]PeerStats
	// ClockSkew is how far this node's clock is ahead of the store's
	// (PostgreSQL's now()), as last measured; ClockMeasured says whether
	// it was (cluster_clock.go).
	ClockSkew     time.Duration
	ClockMeasured bool
}

// PeerStats is what a node knows of another over NATS.
type PeerStats struct {
	// Silence is how long since its last notice: a node repeats itself
	// every heartbeat (2 s), so more than a few seconds says NATS or the
	// node is down, which a gauge of the newest lag cannot.
	Silence time.Duration
	// Lag is how long after their commits its commit notices arrived.
	Lag db.HistogramSnapshot
}

// hubStats are the counters the hub keeps for Stats. Their methods may be
// called from any goroutine.
type hubStats struct {
	deliveries    atomic.Int64
	tokenLookups  atomic.Int64
	pageReads     atomic.Int64
	searches      atomic.Int64 // asks of the store's search (search.go)
	takeovers     atomic.Int64
	turns         map[string]*db.Histogram // static after Open
	clockSkew     atomic.Int64             // nanoseconds; clockMeasured says whether it was
	clockMeasured atomic.Bool

	peersMu sync.Mutex
	peers   map[string]*peerFigures // at most maxPeers
}

// peerFigures is what hubStats keeps of another node.
type peerFigures struct {
	heard time.Time
	lag   *db.Histogram
}

// maxPeers bounds the nodes a node keeps figures of: the names are the
// operator's, so the metrics' series are too; the longest silent goes.
const maxPeers = 64

// lagBounds are the buckets of a notice's lag, in seconds: a millisecond
// on a quiet network, tens of seconds for notices NATS held through an
// outage.
var lagBounds = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// heard records a notice from node, and its commit's lag if it had one.
func (s *hubStats) heard(node string, lag time.Duration, hasLag bool) {
	if node == "" {
		return
	}
	now := time.Now()
	s.peersMu.Lock()
	defer s.peersMu.Unlock()
	p := s.peers[node]
	if p == nil {
		if s.peers == nil {
			s.peers = map[string]*peerFigures{}
		}
		if len(s.peers) >= maxPeers {
			var oldest string
			for name, q := range s.peers {
				if oldest == "" || q.heard.Before(s.peers[oldest].heard) {
					oldest = name
				}
			}
			delete(s.peers, oldest)
		}
		p = &peerFigures{lag: db.NewHistogram(lagBounds...)}
		s.peers[node] = p
	}
	p.heard = now
	if hasLag {
		p.lag.Observe(lag)
	}
}

// peerStats copies the peers' figures.
func (s *hubStats) peerStats() map[string]PeerStats {
	s.peersMu.Lock()
	defer s.peersMu.Unlock()
	out := make(map[string]PeerStats, len(s.peers))
	for name, p := range s.peers {
		out[name] = PeerStats{Silence: time.Since(p.heard), Lag: p.lag.Snapshot()}
	}
	return out
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
	st := Stats{Conns: len(conns), Sessions: sessions, Deliveries: h.stats.deliveries.Load(), TokenLookups: h.stats.tokenLookups.Load(), PageReads: h.stats.pageReads.Load(),
		Turns: map[string]db.HistogramSnapshot{}, Takeovers: h.stats.takeovers.Load(), Peers: h.stats.peerStats(),
		ClockSkew: time.Duration(h.stats.clockSkew.Load()), ClockMeasured: h.stats.clockMeasured.Load()}
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
