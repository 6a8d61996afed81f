package db

import (
	"context"
	"database/sql"
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"
)

// WriterStats is what the writer has done since it started: how many
// group commits, how many requests they carried (a histogram of batch
// sizes), and where the writer goroutine spent its time. It is for
// measuring (the daemon serves it beside pprof with --debug-addr).
type WriterStats struct {
	Batches  int64 `json:"batches"`  // group commits (a retry counts once)
	Requests int64 `json:"requests"` // requests they carried
	Retries  int64 `json:"retries"`  // batches run again with savepoints
	// LockRetries counts batches run again because another daemon held
	// the row of a session they write (PostgreSQL; lock.go).
	LockRetries int64 `json:"lock_retries"`
	// Folds counts the moves of the event log into events (SQLite;
	// fold.go), FoldedRows the events they moved, FoldErrors those that
	// failed (the log then waits for the next), FoldNS their time.
	Folds      int64 `json:"folds"`
	FoldedRows int64 `json:"folded_rows"`
	FoldErrors int64 `json:"fold_errors"`
	FoldNS     int64 `json:"fold_ns"`
	// Rewinds counts the checkpoints the writer ran between two batches
	// so that its next commit would rewind the WAL (SQLite; rewind.go).
	Rewinds int64 `json:"rewinds"`
	// Sizes[i] counts batches of 2^i … 2^(i+1)-1 requests.
	Sizes [11]int64 `json:"sizes"`
	// Time of the writer goroutine in each phase, in nanoseconds: BEGIN,
	// the requests' own statements, the batch's inserts and head update,
	// COMMIT, and the commit hook with the answers. On PostgreSQL BEGIN
	// includes the session locks, and COMMIT the inserts and update, sent
	// with it (batchtx.go).
	BeginNS  int64 `json:"begin_ns"`
	RunNS    int64 `json:"run_ns"`
	FlushNS  int64 `json:"flush_ns"`
	CommitNS int64 `json:"commit_ns"`
	AnswerNS int64 `json:"answer_ns"`
	// Latency is the duration of each committed group commit, from BEGIN
	// to COMMIT returned: what a write waits for once its batch starts.
	Latency HistogramSnapshot `json:"latency"`
}

// writerStats is WriterStats as the writer goroutine counts it; Stats may
// read it from any goroutine.
type writerStats struct {
	batches, requests, retries        atomic.Int64
	lockRetries                       atomic.Int64
	folds, foldedRows, foldErrors     atomic.Int64
	fold                              atomic.Int64
	rewinds                           atomic.Int64
	sizes                             [11]atomic.Int64
	begin, run, flush, commit, answer atomic.Int64
	latency                           *Histogram // set by newWriter
}

func (s *writerStats) batch(n int) {
	s.batches.Add(1)
	s.requests.Add(int64(n))
	i := min(bits.Len(uint(n))-1, len(s.sizes)-1)
	s.sizes[max(i, 0)].Add(1)
}

// since adds the time from t to now to c and returns now.
func since(c *atomic.Int64, t time.Time) time.Time {
	now := time.Now()
	c.Add(int64(now.Sub(t)))
	return now
}

// Stats returns the writer's counters so far.
func (w *Writer) Stats() WriterStats {
	s := &w.stats
	out := WriterStats{
		Batches: s.batches.Load(), Requests: s.requests.Load(), Retries: s.retries.Load(),
		LockRetries: s.lockRetries.Load(),
		Folds:       s.folds.Load(), FoldedRows: s.foldedRows.Load(), FoldErrors: s.foldErrors.Load(), FoldNS: s.fold.Load(),
		Rewinds: s.rewinds.Load(),
		BeginNS: s.begin.Load(), RunNS: s.run.Load(), FlushNS: s.flush.Load(),
		CommitNS: s.commit.Load(), AnswerNS: s.answer.Load(),
	}
	for i := range s.sizes {
		out.Sizes[i] = s.sizes[i].Load()
	}
	if s.latency != nil {
		out.Latency = s.latency.Snapshot()
	}
	return out
}

// Histogram counts durations in fixed buckets, for the daemon's metrics
// (api exports them to Prometheus; db and hub stay free of it). Observe
// and Snapshot may be called from any goroutine.
type Histogram struct {
	bounds []float64       // upper bounds in seconds, ascending; static
	counts []atomic.Uint64 // per bucket, the last for above every bound
	sumNS  atomic.Int64
}

// NewHistogram returns a histogram with these upper bounds, in seconds.
func NewHistogram(bounds ...float64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

// Observe counts one duration.
func (h *Histogram) Observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(h.bounds) && s > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNS.Add(int64(d))
}

// HistogramSnapshot is a histogram's counts at one moment: Cumulative[i]
// counts the observations ≤ Bounds[i] (Prometheus' buckets).
type HistogramSnapshot struct {
	Bounds     []float64 `json:"bounds"`
	Cumulative []uint64  `json:"cumulative"`
	Count      uint64    `json:"count"`
	SumSeconds float64   `json:"sum_seconds"`
}

// Snapshot reads the histogram. Concurrent observations may or may not be
// in it, and its sum may be a moment ahead of its counts.
func (h *Histogram) Snapshot() HistogramSnapshot {
	out := HistogramSnapshot{Bounds: h.bounds, Cumulative: make([]uint64, len(h.bounds))}
	for i := range h.counts {
		out.Count += h.counts[i].Load()
		if i < len(h.bounds) {
			out.Cumulative[i] = out.Count
		}
	}
	out.SumSeconds = time.Duration(h.sumNS.Load()).Seconds()
	return out
}

// commitBounds are the buckets of a group commit's duration, in seconds:
// a SQLite commit takes tens of microseconds to milliseconds, one on
// PostgreSQL over a network a few milliseconds.
var commitBounds = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}

// ClockSkew measures how far this machine's clock is ahead of the
// store's (PostgreSQL's now()), taking the middle of the query's round
// trip as the moment the store read its clock; it returns the round trip
// too, which bounds the measure's error. SQLite has no clock of its own:
// zero.
func (d *DB) ClockSkew(ctx context.Context) (skew, rtt time.Duration, _ error) {
	if !d.dialect.pg {
		return 0, 0, nil
	}
	var at time.Time
	before := time.Now()
	if err := d.ro.QueryRowContext(ctx, `SELECT clock_timestamp()`).Scan(&at); err != nil {
		return 0, 0, fmt.Errorf("read the store's clock: %w", err)
	}
	after := time.Now()
	rtt = after.Sub(before)
	return before.Add(rtt / 2).Sub(at), rtt, nil
}

// SQL is the database's pool, for its statistics (the daemon's metrics).
func (d *DB) SQL() *sql.DB { return d.ro.DB }
