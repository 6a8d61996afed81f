package hub

import (
	"context"
	"strings"

	"albedo/api/wire"
	"albedo/db"
)

// runState is a session's turn state. Guarded by its channel's mu.
type runState struct {
	phase      string // "" means idle
	turnID     string
	queued     int
	lastTurn   string
	streamTurn string
	streamText strings.Builder
}

func (r *runState) status() wire.Status {
	st := wire.Status{Phase: r.phase, TurnID: r.turnID, Queued: r.queued}
	if st.Phase == "" {
		st.Phase = wire.PhaseIdle
	}
	if r.lastTurn != "" {
		lt := r.lastTurn
		st.LastTurn = &lt
	}
	return st
}

// streaming returns the turn whose reply is streaming and its text so far.
func (r *runState) streaming() (string, string) {
	if r.streamTurn == "" {
		return "", ""
	}
	return r.streamTurn, r.streamText.String()
}

// phase returns a session's phase without loading it.
func (h *Hub) phase(id string) string {
	h.mu.Lock()
	ch := h.chans[id]
	h.mu.Unlock()
	if ch == nil {
		return wire.PhaseIdle
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.run.status().Phase
}

// enqueue queues the turn that answers in.
func (h *Hub) enqueue(session string, in db.Input) {
	// The turn runner arrives with the turns issue; until then inputs stay
	// queued and are counted.
	h.mu.Lock()
	ch := h.chans[session]
	h.mu.Unlock()
	if ch == nil {
		return
	}
	ch.mu.Lock()
	ch.run.queued++
	ch.mu.Unlock()
	h.statusChanged(ch)
}

// cancelTurns stops whatever runs for a session about to be deleted.
func (h *Hub) cancelTurns(id string) {}

// providerSet is the seam for the turn runner's providers.
type providerSet interface {
	Check(name string) error
}

// Interrupt stops the session's running turn, if any, and says which.
func (h *Hub) Interrupt(ctx context.Context, session, reason string) (string, bool, error) {
	if _, werr := h.channel(ctx, session); werr != nil {
		return "", false, werr
	}
	return "", false, nil
}

// InterruptAll interrupts every running turn with reason, committing what
// streamed so far. Used by the daemon's stop.
func (h *Hub) InterruptAll(ctx context.Context, reason string) {}
