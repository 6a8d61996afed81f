package hub

import (
	"context"

	"albedo/wire"
)

// Status returns a session's run state.
func (h *Hub) Status(ctx context.Context, session string) (wire.Status, error) {
	ch, werr := h.channel(ctx, session)
	if werr != nil {
		return wire.Status{}, werr
	}
	h.catchUp(ctx, ch)
	ch.mu.Lock()
	defer ch.mu.Unlock()
	push := ch.statusPush()
	st := ch.status()
	st.Head, st.Viewers = push.Head, push.Viewers
	return st, nil
}

// Stopping makes every later input fail with daemon_stopping (retryable)
// and starts no new turn.
func (h *Hub) Stopping() { h.stopping.Store(true) }

// IsStopping says whether Stopping was called.
func (h *Hub) IsStopping() bool { return h.stopping.Load() }

// Drain readies the node to leave a cluster: it claims no session's
// turns from now on, and gives up each lease it holds once the turn
// running under it ends, so that the other nodes run what is queued (at
// once: given up, a lease is theirs to claim). Inputs are still accepted.
// WaitTurns waits for the turns running here.
func (h *Hub) Drain() { h.draining.Store(true) }

// WaitTurns waits until no turn runs on this node, or returns ctx's
// error when it ends first.
func (h *Hub) WaitTurns(ctx context.Context) error {
	done := make(chan struct{})
	go func() { h.runners.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
