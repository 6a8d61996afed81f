package hub

import (
	"context"
	"errors"
	"time"

	"albedo/db"
	"albedo/wire"
)

// Turns on a shared (PostgreSQL) database run on exactly one node: the
// one holding the session's lease (db/runs.go). Inputs may be accepted by
// any node, so the holder takes its queue from the database, not from its
// own commits:
//
//   - A node that commits an input wakes the session (wake): unless it
//     already runs it, it claims the lease and, if it got it, runs the
//     session (runLeased).
//   - The holder runs the session's pending inputs in order, re-reading
//     them after each turn; an input left running is a dead holder's and
//     is repaired first, as a restart repairs it on SQLite. It renews the
//     lease meanwhile; if a renewal finds it lost, the turn is cancelled
//     and nothing more is written for it (every turn write checks the
//     fence: db.Tx.CheckRun).
//   - With nothing left it releases the lease, looking for new inputs
//     under the session row's lock (db.DB.Release).
//   - Every node looks for sessions with work and no live lease every
//     Lease/3 (watchOrphans) and claims them: a holder killed mid-turn is
//     taken over within Lease and that interval.

// DefaultLease is how long a claim on a session's turns lasts unrenewed.
const DefaultLease = 10 * time.Second

// errLeaseLost cancels a turn whose node lost the session's lease.
var errLeaseLost = errors.New("lease lost")

// wake makes sure someone runs the session's pending inputs: this node,
// if it can claim the lease.
func (h *Hub) wake(ch *channel) {
	ch.mu.Lock()
	if ch.run.running {
		ch.run.again = true // it looks again before it lets go
		ch.mu.Unlock()
		return
	}
	if h.stopping.Load() || h.draining.Load() {
		ch.mu.Unlock()
		return // the other nodes claim it (watchOrphans)
	}
	ch.run.running = true
	h.runners.Add(1)
	ch.mu.Unlock()
	go h.runLeased(ch)
}

// runLeased claims the session's lease and runs its inputs while it holds
// it, and again while wake was called meanwhile.
func (h *Hub) runLeased(ch *channel) {
	defer h.runners.Done()
	for {
		ch.mu.Lock()
		ch.run.again = false
		ch.mu.Unlock()
		l, ok, err := h.db.Claim(h.ctx, ch.id, h.opts.Node, h.opts.Lease)
		if err != nil && h.ctx.Err() == nil {
			h.log.Warn("claim a session's turns", "session", ch.id, "err", err)
		}
		if ok {
			h.runOwned(ch, l)
		}
		ch.mu.Lock()
		if !ch.run.again || !ok || h.stopping.Load() || ch.deleted {
			ch.run.running = false
			ch.mu.Unlock()
			h.runChanged(ch)
			return
		}
		ch.mu.Unlock()
	}
}

// runOwned runs the session's pending inputs under lease l until none is
// left and the lease is released, the lease is lost, or the daemon stops.
func (h *Hub) runOwned(ch *channel, l db.Lease) {
	// giveUp lets another node take the session's turns at once (Orphans).
	giveUp := func() { _, _ = h.db.Release(context.WithoutCancel(h.ctx), ch.id, l, true) }
	dropped := func() {
		h.log.Warn("lost the lease of a session's turns; dropping them", "session", ch.id, "fence", l.Fence)
	}
	if err := ch.load(h.ctx, h.loads); err != nil {
		h.log.Warn("load session for turns", "session", ch.id, "err", err)
		giveUp()
		return
	}
	// held is asked when nothing of a turn was committed: the lease may
	// be gone (the fence refused it), and the same input must not be
	// tried again and again until the renewal says so.
	held := func() bool {
		ok, err := h.db.Renew(h.ctx, ch.id, l, h.opts.Lease)
		switch {
		case err != nil:
			giveUp()
		case !ok:
			dropped()
		}
		return err == nil && ok
	}
	lost := make(chan struct{})
	stopRenew := h.renew(ch, l, lost)
	defer stopRenew()
	h.log.Info("running a session's turns", "session", ch.id, "fence", l.Fence)
	for {
		select {
		case <-lost:
			dropped()
			return
		default:
		}
		if h.stopping.Load() || h.draining.Load() || ch.isDeleted() {
			giveUp()
			return
		}
		ins, err := h.db.PendingInputsOf(h.ctx, ch.id, queueLook)
		if err != nil {
			if h.ctx.Err() == nil {
				h.log.Warn("read a session's inputs", "session", ch.id, "err", err)
			}
			giveUp()
			return
		}
		if len(ins) == 0 {
			released, err := h.db.Release(h.ctx, ch.id, l, false)
			if err != nil || released {
				return
			}
			continue // an input came while it looked
		}
		if ins[0].Delivery == wire.DeliveryRunning {
			if !h.takeOver(ch, ins[0], l, held) {
				return
			}
			continue
		}
		ch.mu.Lock()
		ch.run.queue = ch.run.queue[:0]
		for _, in := range ins[1:] {
			ch.run.queue = append(ch.run.queue, queuedOf(in, l))
		}
		ch.mu.Unlock()
		if h.runOne(ch, queuedOf(ins[0], l)) == "" && !held() {
			return
		}
	}
}

// takeOver goes on with an input left running by a holder that stopped,
// died or lost the lease: its turn resumes if its tool calls have no
// result (as at a start, start.go), else it is repaired. It says whether
// the lease is still held.
func (h *Hub) takeOver(ch *channel, in db.Input, l db.Lease, held func() bool) bool {
	open, err := h.db.OpenToolTurn(h.ctx, ch.id, in.TurnID)
	if err != nil {
		h.log.Warn("read a turn's tool calls", "session", ch.id, "err", err)
		return false
	}
	if open {
		q := queuedOf(in, l)
		q.resume = true
		return h.runOne(ch, q) != "" || held()
	}
	if err := h.repair(h.ctx, in, l); err != nil {
		h.log.Warn("repair a turn", "session", ch.id, "err", err)
		return false
	}
	h.stats.takeovers.Add(1)
	return true
}

// renew renews l every Lease/3 until the returned stop is called. When a
// renewal finds the lease lost it cancels the running turn (nothing of
// it is committed: its writes check the fence) and closes lost.
func (h *Hub) renew(ch *channel, l db.Lease, lost chan struct{}) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(h.opts.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			ok, err := h.db.Renew(h.ctx, ch.id, l, h.opts.Lease)
			if err != nil && h.ctx.Err() == nil {
				// Tried again next tick; the fence guards the rest. Said,
				// for a store that fails renewals lets the lease lapse.
				h.log.Warn("renew the lease of a session's turns", "session", ch.id, "err", err)
			}
			if err != nil || ok {
				continue
			}
			close(lost)
			ch.mu.Lock()
			cancel := ch.run.cancel
			ch.mu.Unlock()
			if cancel != nil {
				cancel(errLeaseLost)
			}
			return
		}
	}()
	return func() { close(done); <-finished }
}

// watchOrphans claims, every Lease/3, sessions with work and no live
// lease, until the hub closes.
func (h *Hub) watchOrphans() {
	defer h.loops.Done()
	t := time.NewTicker(h.opts.Lease / 3)
	defer t.Stop()
	for {
		h.claimOrphans()
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// queueLook bounds the inputs the holder reads before each turn: the next
// one, and the queue's length in the status up to this.
const queueLook = 1000

// orphansAtOnce bounds the sessions one look claims.
const orphansAtOnce = 64

func (h *Hub) claimOrphans() {
	if h.stopping.Load() {
		return
	}
	ids, err := h.db.Orphans(h.ctx, orphansAtOnce)
	if err != nil {
		if h.ctx.Err() == nil {
			h.log.Warn("look for sessions with no node", "err", err)
		}
		return
	}
	for _, id := range ids {
		h.wake(h.ensureChannel(id))
	}
}

func (ch *channel) isDeleted() bool {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.deleted
}
