package hub

import (
	"context"
	"fmt"

	"albedo/db"
	"albedo/hub/provider"
	"albedo/wire"
)

// Start repairs what a crash left and resumes work: a turn left running
// with tool calls that have no result goes on from them; every other turn
// left running is committed as interrupted with reason daemon_restart
// (keeping the text checkpointed so far); and inputs still queued are
// queued again, in order.
// Call it once, before serving.
func (h *Hub) Start(ctx context.Context) error {
	// The changes' number before the tokens are read: a change made
	// meanwhile is applied again, which is harmless, rather than missed.
	from, err := h.db.ChangeGen(ctx)
	if err != nil {
		return err
	}
	if err := h.loadTokens(ctx); err != nil {
		return err
	}
	if h.db.Shared() {
		h.loops.Add(1)
		go h.followChanges(from)
		if err := h.bus.Start(peerHandler{h}); err != nil {
			return fmt.Errorf("join the cluster's bus: %w", err)
		}
		// With NATS or without, other nodes' commits reach this node's
		// viewers: at once by notice, within a heartbeat from the store.
		// Both are loops, not turns: a stop waits for the turns to end
		// (InterruptAll), and these only for the hub's context.
		h.loops.Add(1)
		go h.heartbeat()
		// Other nodes may be running some of these: each is repaired
		// and resumed by whichever node claims its lease (cluster_leases.go).
		h.loops.Add(1)
		go h.watchOrphans()
		h.loops.Add(1)
		go h.watchClock()
		return nil
	}
	ins, err := h.db.PendingInputs(ctx)
	if err != nil {
		return err
	}
	open, err := h.db.OpenToolTurns(ctx)
	if err != nil {
		return err
	}
	for _, in := range ins {
		if in.Delivery != wire.DeliveryRunning {
			continue
		}
		if open[in.Session][in.TurnID] {
			// Its calls wait for decisions, or ran when it stopped: it
			// goes on from them, before the inputs queued after it.
			q := queuedOf(in, db.Lease{})
			q.resume = true
			h.enqueue(h.ensureChannel(in.Session), q)
			continue
		}
		if err := h.repair(ctx, in, db.Lease{}); err != nil {
			return err
		}
	}
	for _, in := range ins {
		if in.Delivery != wire.DeliveryQueued {
			continue
		}
		h.enqueue(h.ensureChannel(in.Session), queuedOf(in, db.Lease{}))
	}
	return nil
}

// repair commits a turn left running as interrupted (daemon_restart),
// with the text checkpointed so far, under lease l (zero on SQLite).
func (h *Hub) repair(ctx context.Context, in db.Input, l db.Lease) error {
	turn := wire.Event{Type: wire.EventTurn, TurnID: in.TurnID, InputID: in.InputID,
		State: wire.TurnInterrupted, Reason: wire.ReasonDaemonRestart}
	evs := []wire.Event{turn}
	if in.Partial != "" {
		author := ""
		if s, err := h.db.Session(ctx, in.Session); err == nil {
			if p, err := h.providers.Get(s.Provider); err == nil {
				author = p.Author(provider.Request{Model: s.Model})
			}
		}
		evs = []wire.Event{{Type: wire.EventMessage, Role: wire.RoleAssistant, Author: author, Text: in.Partial,
			InputID: in.InputID, TurnID: in.TurnID, State: wire.MessageInterrupted}, turn}
	}
	_, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		if err := tx.CheckRun(ctx, in.Session, l); err != nil {
			return err
		}
		if _, err := tx.Append(ctx, in.Session, evs...); err != nil {
			return err
		}
		return tx.SetDelivery(ctx, in.Session, in.InputID, wire.DeliveryInterrupted, "")
	})
	if err != nil {
		return fmt.Errorf("repair turn %s of %s: %w", in.TurnID, in.Session, err)
	}
	if l.Fence == 0 {
		h.log.Info("repaired a turn left running", "session", in.Session, "turn", in.TurnID)
		return nil
	}
	// In a cluster: its node died or stalled past its lease, or this
	// node could not commit the turn's end.
	h.log.Warn("repaired a turn left running under a lease", "session", in.Session, "turn", in.TurnID, "fence", l.Fence)
	return nil
}
