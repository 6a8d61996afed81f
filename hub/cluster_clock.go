package hub

import (
	"context"
	"time"
)

// Event times and the NATS lag come from each node's own clock, so nodes
// whose clocks disagree show viewers events out of time and skew the lag.
// A node of a cluster compares its clock with the store's now and then,
// and warns (log, and Stats.ClockSkew for the metric) when they differ by
// more than maxClockSkew.

// clockEvery is how often a node compares its clock with the store's.
const clockEvery = 30 * time.Second

// maxClockSkew is the difference past which a node warns.
const maxClockSkew = time.Second

// watchClock compares the clocks every clockEvery until the hub closes,
// warning once each time the difference passes maxClockSkew and saying
// when it is back under.
func (h *Hub) watchClock() {
	defer h.loops.Done()
	t := time.NewTicker(clockEvery)
	defer t.Stop()
	warned := false
	for {
		warned = h.checkClock(h.db.ClockSkew, warned)
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// checkClock measures the clocks once with measure and records the skew;
// warned says whether the last look warned, and it returns whether this
// one does (or would, still).
func (h *Hub) checkClock(measure func(context.Context) (skew, rtt time.Duration, _ error), warned bool) bool {
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	skew, rtt, err := measure(ctx)
	cancel()
	if err != nil {
		return warned
	}
	h.stats.clockSkew.Store(int64(skew))
	h.stats.clockMeasured.Store(true)
	off := skew.Abs() > maxClockSkew+rtt/2
	switch {
	case off && !warned:
		h.log.Warn("this node's clock and the store's differ: event times and the NATS lag come from each node's clock; run NTP",
			"ahead_by", skew.Round(time.Millisecond), "round_trip", rtt.Round(time.Millisecond))
	case !off && warned:
		h.log.Info("this node's clock agrees with the store's again", "ahead_by", skew.Round(time.Millisecond))
	}
	return off
}
