package hub

import (
	"context"
	"time"
)

// On a cluster, other nodes' commits reach this node's index by a look at
// the store every feedPollEvery for the sessions changed since the last
// look, less feedOverlap (a commit becomes visible a little after its
// time). Sessions made on other nodes come the same way; those deleted
// come with the cluster's changes (sessionGone).

// feedPollEvery is how often a node of a cluster looks.
const feedPollEvery = 500 * time.Millisecond

// poll looks until the hub closes.
func (f *feed) poll() {
	t := time.NewTicker(feedPollEvery)
	defer t.Stop()
	for {
		select {
		case <-f.h.ctx.Done():
			return
		case <-t.C:
		}
		f.pollOnce()
	}
}

// pollOnce takes into the index what changed in the store since the last
// look.
func (f *feed) pollOnce() {
	ctx, cancel := context.WithTimeout(f.h.ctx, 5*time.Second)
	defer cancel()
	f.mu.Lock()
	since := f.polled.Add(-feedOverlap)
	f.mu.Unlock()
	started := time.Now()
	ss, err := f.h.db.SessionsSince(ctx, since)
	if err != nil {
		return
	}
	for _, s := range ss {
		n := entryOf(s)
		f.mu.Lock()
		e := f.entries[s.ID]
		same := e != nil && !e.gone && e.head >= n.head && e.title == n.title
		f.mu.Unlock()
		if same {
			continue
		}
		f.changed(s.ID, func(e *feedEntry) {
			if e.gone && !e.at.Before(n.at) {
				return // deleted after that change
			}
			if n.head > e.head {
				e.head, e.lastKnown, e.lastTurn = n.head, false, n.lastTurn
				e.msgsGen++
			}
			e.gone, e.title, e.provider = false, n.title, n.provider
			e.at = later(e.at, n.at)
		})
	}
	f.mu.Lock()
	f.polled = started
	f.mu.Unlock()
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
