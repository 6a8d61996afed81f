package api

import (
	"github.com/prometheus/client_golang/prometheus"

	"albedo/db"
	"albedo/wire"
)

// The daemon's Prometheus metrics. They are read when scraped, from the
// counters the server, the hub and the database writer keep anyway
// (hub.Stats, db.WriterStats), so that nothing on a hot path knows of
// Prometheus. They name no session, token or person.
//
// Who may read them: the daemon serves /metrics only on --metrics-addr, a
// listener of its own without a token (like --debug-addr), never on the
// API's address. A scraper given an owner token could do everything an
// owner can, and there is no read-only role; a separate port is what
// Prometheus expects and what a firewall can keep inside.

var (
	descConns = prometheus.NewDesc("albedo_connections",
		"Websocket connections open, by the role of their token (\"\" until a hello names it).", []string{"role"}, nil)
	descOpen = prometheus.NewDesc("albedo_open_connections",
		"Connections the API's listener holds open (TCP, websockets or not); at albedo_open_connections_max it accepts no more until one closes.", nil, nil)
	descOpenMax = prometheus.NewDesc("albedo_open_connections_max",
		"The bound on albedo_open_connections, below the file descriptors the daemon may open.", nil, nil)
	descFreshClosed = prometheus.NewDesc("albedo_fresh_closed_total",
		"Connections closed before their request came whole, to make room at the bound on such connections: by why, idle (nothing sent, or nothing more) or partial (at accept, a header begun and not ended).", []string{"why"}, nil)
	descCuts = prometheus.NewDesc("albedo_connections_cut_total",
		"Websockets the daemon ended for their peer, by why: heartbeat (a ping with no pong within the interval), slow (a write past the write timeout).", []string{"why"}, nil)
	descSubs = prometheus.NewDesc("albedo_channels",
		"Session channels (subscriptions) of all connections.", nil, nil)
	descSessions = prometheus.NewDesc("albedo_sessions_loaded",
		"Sessions held in memory: watched by a connection, or with turns.", nil, nil)
	descDeliveries = prometheus.NewDesc("albedo_deliveries_total",
		"Event frames handed to connections' writers.", nil, nil)
	descTokenLookups = prometheus.NewDesc("albedo_token_lookups_total",
		"Tokens this node did not know, looked up in a cluster's store (one a hash the store did not have).", nil, nil)
	descBatch = prometheus.NewDesc("albedo_writer_batch_size",
		"Requests (inputs, posts, turn writes …) carried by one group commit.", nil, nil)
	descCommit = prometheus.NewDesc("albedo_writer_commit_seconds",
		"Duration of one group commit, from BEGIN to COMMIT returned.", nil, nil)
	descRetries = prometheus.NewDesc("albedo_writer_retries_total",
		"Group commits run again: one request failed (savepoints), or another node held a session's row.", []string{"why"}, nil)
	descFolds = prometheus.NewDesc("albedo_writer_folds_total",
		"Moves of SQLite's event log into the events table, by result: a failed one leaves the log to grow until the next.", []string{"result"}, nil)
	descFolded = prometheus.NewDesc("albedo_writer_folded_events_total",
		"Events the folds of SQLite's event log moved into the events table.", nil, nil)
	descTurns = prometheus.NewDesc("albedo_turn_seconds",
		"Duration of the turns this daemon ran, from start to committed end, by final state.", []string{"state"}, nil)
	descErrors = prometheus.NewDesc("albedo_errors_total",
		"Error replies, HTTP and websocket, by the contract's code (internal: see the log under its ref).", []string{"code"}, nil)
	descReady = prometheus.NewDesc("albedo_ready",
		"1 while /readyz would answer 200 (the store answers; not draining or stopping), else 0.", nil, nil)
	descTakeovers = prometheus.NewDesc("albedo_lease_takeovers_total",
		"Turns another node left running (it died, or lost the lease) that this node committed as interrupted and went on from.", nil, nil)
	descPeerLag = prometheus.NewDesc("albedo_nats_lag_seconds",
		"How long after their commit on another node its commit notices arrived here, by that node.", []string{"peer"}, nil)
	descPeerSilence = prometheus.NewDesc("albedo_nats_peer_silence_seconds",
		"Seconds since the last notice from another node over NATS, which repeats itself every 2 s: past 6 s, NATS or that node is down.", []string{"peer"}, nil)
	descClockSkew = prometheus.NewDesc("albedo_clock_skew_seconds",
		"How far this node's clock is ahead of the store's (PostgreSQL's), as last measured; past 1 s the node warns.", nil, nil)
)

// Collector returns the collector of the server's metrics, to register on
// the daemon's registry. Collect may be called from any goroutine.
func (s *Server) Collector() prometheus.Collector { return collector{s} }

type collector struct{ s *Server }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descConns, descOpen, descOpenMax, descFreshClosed, descCuts, descSubs, descSessions, descDeliveries, descTokenLookups, descBatch, descCommit, descRetries, descFolds, descFolded, descTurns,
		descErrors, descReady, descTakeovers, descPeerLag, descPeerSilence, descClockSkew} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	for role, n := range c.s.ws.ConnsByRole() {
		ch <- prometheus.MustNewConstMetric(descConns, prometheus.GaugeValue, float64(n), string(role))
	}

	ch <- prometheus.MustNewConstMetric(descOpen, prometheus.GaugeValue, float64(c.s.open.Open()))
	ch <- prometheus.MustNewConstMetric(descOpenMax, prometheus.GaugeValue, float64(c.s.open.max))
	ch <- prometheus.MustNewConstMetric(descFreshClosed, prometheus.CounterValue, float64(c.s.fresh.closed.Load()), "idle")
	ch <- prometheus.MustNewConstMetric(descFreshClosed, prometheus.CounterValue, float64(c.s.fresh.shed.Load()), "partial")
	heartbeat, slow := c.s.ws.Cuts()
	ch <- prometheus.MustNewConstMetric(descCuts, prometheus.CounterValue, float64(heartbeat), "heartbeat")
	ch <- prometheus.MustNewConstMetric(descCuts, prometheus.CounterValue, float64(slow), "slow")
	st := c.s.hub.Stats()
	ch <- prometheus.MustNewConstMetric(descSubs, prometheus.GaugeValue, float64(st.Subs))
	ch <- prometheus.MustNewConstMetric(descSessions, prometheus.GaugeValue, float64(st.Sessions))
	ch <- prometheus.MustNewConstMetric(descDeliveries, prometheus.CounterValue, float64(st.Deliveries))
	ch <- prometheus.MustNewConstMetric(descTokenLookups, prometheus.CounterValue, float64(st.TokenLookups))
	for state, h := range st.Turns {
		ch <- constHistogram(descTurns, h, state)
	}
	ch <- prometheus.MustNewConstMetric(descTakeovers, prometheus.CounterValue, float64(st.Takeovers))
	for name, p := range st.Peers {
		ch <- constHistogram(descPeerLag, p.Lag, name)
		ch <- prometheus.MustNewConstMetric(descPeerSilence, prometheus.GaugeValue, p.Silence.Seconds(), name)
	}
	if st.ClockMeasured {
		ch <- prometheus.MustNewConstMetric(descClockSkew, prometheus.GaugeValue, st.ClockSkew.Seconds())
	}
	c.s.errs.each(func(code wire.Code, n int64) {
		ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(n), string(code))
	})
	ready := 0.0
	if c.s.readyNow() {
		ready = 1
	}
	ch <- prometheus.MustNewConstMetric(descReady, prometheus.GaugeValue, ready)

	ws := c.s.hub.WriterStats()
	ch <- prometheus.MustNewConstMetric(descRetries, prometheus.CounterValue, float64(ws.Retries), "request_failed")
	ch <- prometheus.MustNewConstMetric(descRetries, prometheus.CounterValue, float64(ws.LockRetries), "row_locked")
	ch <- constHistogram(descCommit, ws.Latency)
	ch <- prometheus.MustNewConstMetric(descFolds, prometheus.CounterValue, float64(ws.Folds), "ok")
	ch <- prometheus.MustNewConstMetric(descFolds, prometheus.CounterValue, float64(ws.FoldErrors), "failed")
	ch <- prometheus.MustNewConstMetric(descFolded, prometheus.CounterValue, float64(ws.FoldedRows))
	// Sizes[i] counts batches of 2^i … 2^(i+1)-1 requests: the bucket
	// "≤ 2^(i+1)-1"; the last one is open-ended (+Inf).
	buckets := map[float64]uint64{}
	var cum uint64
	for i := 0; i < len(ws.Sizes)-1; i++ {
		cum += uint64(ws.Sizes[i])
		buckets[float64(int(1)<<(i+1)-1)] = cum
	}
	ch <- prometheus.MustNewConstHistogram(descBatch, uint64(ws.Batches), float64(ws.Requests), buckets)
}

// constHistogram exports a db.HistogramSnapshot.
func constHistogram(d *prometheus.Desc, h db.HistogramSnapshot, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.Bounds))
	for i, b := range h.Bounds {
		buckets[b] = h.Cumulative[i]
	}
	return prometheus.MustNewConstHistogram(d, h.Count, h.SumSeconds, buckets, labels...)
}
