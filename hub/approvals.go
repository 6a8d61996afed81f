package hub

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"albedo/db"
	"albedo/hub/access"
	"albedo/hub/tools"
	"albedo/wire"
)

// approvalWaits wakes the calls of a session that wait for a decision
// when one may have been made: by this node (Decide), or by another,
// whose approval event reached this node (deliver). A wake is a hint:
// the waiter reads the call's row again.
type approvalWaits struct {
	mu sync.Mutex
	m  map[string]chan struct{} // by session; closed to wake
}

// waiter returns a channel closed at the session's next decision.
func (a *approvalWaits) waiter(session string) <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[string]chan struct{}{}
	}
	ch := a.m[session]
	if ch == nil {
		ch = make(chan struct{})
		a.m[session] = ch
	}
	return ch
}

// wake wakes the session's waiters.
func (a *approvalWaits) wake(session string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ch := a.m[session]; ch != nil {
		close(ch)
		delete(a.m, session)
	}
}

// decisionsIn wakes the waiters of a session whose new events hold a
// decision.
func (h *Hub) decisionsIn(session string, evs []db.Event) {
	for _, e := range evs {
		if e.Type == wire.EventApproval {
			h.approvals.wake(session)
			return
		}
	}
}

// Decide records a person's decision on a call that waits for one and
// returns its committed approval event: the first decision wins,
// wherever it is made (a later one is conflict); not_found for no such
// call. The turn waiting for it goes on, on whichever node runs it.
func (h *Hub) Decide(ctx context.Context, session, callID string, d wire.Decision, by wire.Author) (wire.Event, error) {
	switch d.Decision {
	case wire.DecisionAllow, wire.DecisionAllowSession, wire.DecisionDeny:
	default:
		return wire.Event{}, wire.Errorf(wire.CodeBadRequest, "decision %q is not allow, allow_session or deny", d.Decision)
	}
	if err := access.CheckTexts("reason", d.Reason); err != nil {
		return wire.Event{}, err
	}
	if len(d.Reason) > wire.MaxReasonBytes {
		return wire.Event{}, wire.Errorf(wire.CodeTooLarge, "reason passes the limit of %d bytes", wire.MaxReasonBytes)
	}
	if _, werr := h.channel(ctx, session); werr != nil {
		return wire.Event{}, werr
	}
	ev := wire.Event{Type: wire.EventApproval, CallID: callID, Decision: d.Decision, Author: by.Name, AuthorID: by.ID, Reason: d.Reason}
	var out []db.Event
	_, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		c, err := tx.DecideToolCall(ctx, session, callID, d.Decision, by.Name)
		if err != nil {
			return err
		}
		if d.Decision == wire.DecisionAllowSession {
			if err := tx.AllowTool(ctx, session, c.Tool); err != nil {
				return err
			}
		}
		ev.TurnID = c.TurnID
		evs := []wire.Event{ev}
		if d.Decision == wire.DecisionDeny {
			// Its result goes with the decision: who denied it, and why,
			// for the model and the people reading.
			c.State, c.Error = wire.ToolDenied, "denied by "+by.Name
			if d.Reason != "" {
				c.Error += ": " + d.Reason
			}
			if err := tx.EndToolCall(ctx, session, callID, c.State, "", c.Error); err != nil {
				return err
			}
			evs = append(evs, resultEvent(c))
		}
		out, err = tx.Append(ctx, session, evs...)
		return err
	})
	switch {
	case errors.Is(err, db.ErrNotFound):
		return wire.Event{}, wire.Errorf(wire.CodeNotFound, "session %q has no call %q", session, callID)
	case errors.Is(err, db.ErrDecided):
		return wire.Event{}, wire.Errorf(wire.CodeConflict, "call %q was decided already, or has ended", callID)
	case err != nil:
		return wire.Event{}, err
	}
	h.approvals.wake(session)
	var committed wire.Event
	if err := json.Unmarshal(out[0].JSON, &committed); err != nil {
		return wire.Event{}, err
	}
	return committed, nil
}

// maxApprovals bounds a list of pending calls.
const maxApprovals = 256

// Approvals lists the calls of a session that wait for a decision, oldest
// first.
func (h *Hub) Approvals(ctx context.Context, session string) (wire.Approvals, error) {
	if _, werr := h.channel(ctx, session); werr != nil {
		return wire.Approvals{}, werr
	}
	cs, err := h.db.PendingToolCalls(ctx, session, maxApprovals)
	if err != nil {
		return wire.Approvals{}, err
	}
	out := wire.Approvals{Approvals: make([]wire.Approval, 0, len(cs))}
	for _, c := range cs {
		out.Approvals = append(out.Approvals, wire.Approval{CallID: c.CallID, TurnID: c.TurnID, Tool: c.Tool,
			Arguments: []byte(argsOrEmpty(c.Arguments)), Offset: c.Offset, RequestedAt: c.RequestedAt, ExpiresAt: c.ExpiresAt})
	}
	return out, nil
}

// Tools lists the tools a session may call now (every tool served, for
// ""), each with the policy its calls would get.
func (h *Hub) Tools(ctx context.Context, session string) (wire.Tools, error) {
	allowed := map[string]bool{}
	if session != "" {
		if _, werr := h.channel(ctx, session); werr != nil {
			return wire.Tools{}, werr
		}
		var err error
		if allowed, err = h.db.AllowedTools(ctx, session); err != nil {
			return wire.Tools{}, err
		}
	}
	policy, _ := h.providers.Tools()
	out := wire.Tools{Tools: []wire.ToolInfo{}}
	offers := h.toolSources.Offers("")
	offers = append(offers, h.remoteOffers("", offers)...)
	if h.opts.MCP != nil && session == "" {
		offers = tools.Unique(append(offers, h.opts.MCP.Offers(ctx, "", nil)...))
		out.Servers = h.opts.MCP.Status("", nil)
	}
	if session != "" {
		var err error
		if offers, err = h.offers(ctx, session); err != nil {
			return wire.Tools{}, err
		}
		if h.opts.MCP != nil {
			if s, err := h.db.Session(ctx, session); err == nil {
				out.Servers = h.opts.MCP.Status(session, h.providers.MCPServers(s.Provider))
			}
		}
	}
	for _, o := range offers {
		p := policy.OfOr(o.Full, o.Default)
		if p == tools.Ask && allowed[o.Full] {
			p = tools.Allow
		}
		out.Tools = append(out.Tools, wire.ToolInfo{Name: o.Full, Description: o.Spec.Description, InputSchema: o.Spec.InputSchema, Policy: string(p)})
	}
	return out, nil
}
