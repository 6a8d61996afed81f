package hub

import (
	"context"

	"albedo/db"
	"albedo/hub/peer"
	"time"
)

// heartbeatEvery is how often a node repeats its viewers and the run
// state of the sessions it runs, and re-reads the heads of the sessions
// it serves: a lost notice delays delivery by at most this.
const heartbeatEvery = 2 * time.Second

// remoteTTL is how long what another node said about a session's viewers
// or run state holds without being said again: a node that died is
// forgotten within this.
const remoteTTL = 3 * heartbeatEvery

// heartbeat runs on a node of a cluster (with NATS or without) until the
// hub closes. Every heartbeatEvery (and at once after NATS comes back) it:
//   - re-reads the heads of the sessions this node serves, so that an
//     event whose notice was lost reaches its viewers at most a heartbeat
//     late;
//   - repeats this node's viewers of each session and the run state of
//     each session whose turns it runs, so that a node that missed a
//     notice, or started since, knows them;
//   - forgets what other nodes said that they have not repeated within
//     remoteTTL (a node that died).
func (h *Hub) heartbeat() {
	defer h.loops.Done()
	t := time.NewTicker(h.opts.heartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		case <-h.reconcile:
		}
		h.reconcileHeads()
		h.repeat()
		h.forgetSilent()
	}
}

// reconcileNow asks the heartbeat for a look at the store without
// waiting for its tick.
func (h *Hub) reconcileNow() {
	select {
	case h.reconcile <- struct{}{}:
	default:
	}
}

// reconcileBatch bounds the sessions of one heads query.
const reconcileBatch = 500

// reconcileHeads moves every served channel to its head in the store.
func (h *Hub) reconcileHeads() {
	var watched []*channel
	for _, ch := range h.allChannels() {
		ch.mu.Lock()
		if len(ch.subs) > 0 && !ch.deleted {
			watched = append(watched, ch)
		}
		ch.mu.Unlock()
	}
	for len(watched) > 0 {
		n := min(len(watched), reconcileBatch)
		ids := make([]string, n)
		for i, ch := range watched[:n] {
			ids[i] = ch.id
		}
		ctx, cancel := context.WithTimeout(h.ctx, heartbeatEvery)
		heads, err := h.db.Heads(ctx, ids)
		cancel()
		if err != nil {
			// Once the node stops, a read cut or slowed by the stop is
			// no fault: nothing waits on it.
			if h.ctx.Err() == nil && !h.IsStopping() {
				h.log.Warn("re-read heads", "err", err)
			}
			return
		}
		for _, ch := range watched[:n] {
			if head, ok := heads[ch.id]; ok {
				h.advanceTo(ch, head)
			}
		}
		watched = watched[n:]
	}
}

// catchUp moves a channel to its head in the store: a client that asks
// for more than this node has seen may be ahead of it only because a
// notice is late, not ahead of the log.
func (h *Hub) catchUp(ctx context.Context, ch *channel) {
	if !h.db.Shared() {
		return
	}
	head, err := h.db.Head(ctx, ch.id)
	if err != nil {
		return
	}
	h.advanceTo(ch, head)
}

// advanceTo moves a channel to its session's head in the store, if the
// store's session is the channel's. One of another epoch was made under
// the same id after the channel's was deleted on another node, which this
// node has not heard of yet: the channel's session is gone, and its
// watchers must not be sent the new one's events.
func (h *Hub) advanceTo(ch *channel, head db.SessionHead) {
	if epoch := ch.epochOf(); epoch != "" && head.Epoch != epoch {
		h.sessionGone(ch.id)
		return
	}
	h.advance(ch, head.Head, nil, nil)
}

// repeat tells the other nodes again this node's viewers (peer.RepeatBatch
// sessions a notice), the run state of the sessions it runs, and the
// bots it serves.
func (h *Hub) repeat() {
	h.publishBots()
	now := time.Now()
	viewed := make([]peer.Presence, 0, peer.RepeatBatch)
	send := func() {
		if len(viewed) > 0 {
			h.bus.Publish(peer.Repeat{Node: h.opts.Node, Sessions: viewed})
			viewed = viewed[:0] // publish has encoded them
		}
	}
	for _, ch := range h.allChannels() {
		ch.mu.Lock()
		viewers, running := ch.watching > 0, ch.run.running
		ch.mu.Unlock()
		if viewers {
			if viewed = append(viewed, presenceOf(ch, now)); len(viewed) == peer.RepeatBatch {
				send()
			}
		}
		if running {
			h.publishStatus(ch)
		}
	}
	send()
}

// forgetSilent drops what other nodes said and did not repeat in time.
func (h *Hub) forgetSilent() {
	for _, ch := range h.allChannels() {
		ch.mu.Lock()
		changed := false
		for node, rv := range ch.remoteViewers {
			if time.Since(rv.at) > remoteTTL {
				delete(ch.remoteViewers, node)
				changed = true
			}
		}
		if changed {
			ch.presence = nil
		}
		status := ch.remoteRun != nil && time.Since(ch.remoteRunAt) > remoteTTL
		if status {
			ch.remoteRun = nil
		}
		ch.mu.Unlock()
		if changed {
			h.presenceChanged(ch)
		}
		if status {
			h.statusChanged(ch)
		}
	}
}
