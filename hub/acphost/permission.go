package acphost

import (
	"context"
	"fmt"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"albedo/wire"
)

// permission answers the agent's session/request_permission: the call is
// committed as one that asks (the policy of acp:KIND may decide it at
// once), people decide it, and the agent is answered with the option
// closest to the decision, which a notice in the log names.
func (ts *turnState) permission(p acp.RequestPermissionRequest) acp.RequestPermissionResponse {
	bg := context.WithoutCancel(ts.ctx)
	ts.mu.Lock()
	c := ts.record(p.ToolCall.ToolCallId)
	if c == nil {
		ts.mu.Unlock()
		return cancelled()
	}
	ts.awaitAnnounced(c, p.ToolCall)
	merge(c, p.ToolCall)
	// A call the agent announced as running (opencode does, before it
	// asks) is in the log already: asked again, it waits as one that asks.
	again := c.committed && !c.ended && !c.asked
	if c.committed && !again {
		// It ended, or asked already: the request is a call of its own.
		d := *c
		d.id, d.ready, d.committed, d.ended, d.asked = newID(), make(chan struct{}), false, false, false
		c = &d
	}
	if !again && !ts.claimCommit(c) {
		ts.mu.Unlock()
		return cancelled()
	}
	c.asked = true
	snap := ts.snapshot(c)
	c.diff = snap.call().Diff
	ts.mu.Unlock()

	s := ts.t.Sink
	if again {
		// Its announcement may be committing on the update's goroutine:
		// there is no call in the store to ask on until it is.
		<-c.ready
	}
	call := snap.call()
	call.Again = again
	d, err := s.Propose(bg, call, wire.PolicyAsk)
	if !again {
		close(c.ready)
	}
	why := ""
	if err == nil && d == "" {
		d, why, err = s.Await(ts.ctx, c.id)
	}
	if err != nil {
		ts.a.host.log.Warn("an agent's permission request", "session", ts.a.session, "err", err)
		ts.endAsked(bg, c, wire.ToolCancelled, "the daemon could not record a decision: "+err.Error())
		return cancelled()
	}
	switch d {
	case wire.ToolExpired, wire.ToolCancelled: // their result is committed
		ts.mu.Lock()
		c.ended = true
		ts.mu.Unlock()
		return cancelled()
	}
	opt, ok := pickOption(p.Options, d)
	if !ok {
		ts.endAsked(bg, c, wire.ToolDenied, "the agent offered no option for the decision "+d)
		_ = s.Note(bg, c.id, fmt.Sprintf("The agent offered no option to %s with; it was told the request was cancelled.", d))
		return cancelled()
	}
	if d == wire.DecisionDeny {
		if why == "" {
			why = "denied by the daemon's policy"
		}
		ts.endAsked(bg, c, wire.ToolDenied, why)
	}
	if err := s.Note(bg, c.id, fmt.Sprintf("The agent's request was answered “%s” (%s).", wire.CutUTF8(opt.Name, 256), opt.Kind)); err != nil {
		ts.a.host.log.Warn("note an agent's permission", "session", ts.a.session, "err", err)
	}
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.RequestPermissionOutcomeSelected{OptionId: opt.OptionId}}}
}

// awaitAnnounced waits, for a request that says little of its call,
// for the update that announced it (with its diff and files, which
// people deciding want to see): the SDK answers a request at once and
// the updates before it in order, on another goroutine, so it may not be
// handled yet. The caller holds ts.mu, which this lets go meanwhile.
func (ts *turnState) awaitAnnounced(c *call, tc acp.ToolCallUpdate) {
	if tc.Content != nil || tc.Locations != nil {
		return
	}
	ts.mu.Unlock()
	select {
	case <-c.seen:
	case <-time.After(announceWait):
	}
	ts.mu.Lock()
}

// endAsked commits the end of a call that was not allowed.
func (ts *turnState) endAsked(ctx context.Context, c *call, state, why string) {
	ts.mu.Lock()
	if c.ended {
		ts.mu.Unlock()
		return
	}
	c.ended = true
	ts.mu.Unlock()
	if err := ts.t.Sink.Result(ctx, Result{ID: c.id, State: state, Error: why}); err != nil {
		ts.a.host.log.Warn("commit an agent's tool result", "session", ts.a.session, "err", err)
	}
}

// announceWait is how long a permission request waits for the update
// that announced its call.
const announceWait = 250 * time.Millisecond

func cancelled() acp.RequestPermissionResponse {
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}
}

// pickOption is the agent's option for a decision: allow as allow_once,
// allow_session as allow_always, deny as reject_once; with none of that
// kind, the closest of the same sense (allow_always for allow, and so
// on). A deny never picks an option that allows, nor an allow one that
// rejects: with none of its sense, ok is false.
func pickOption(opts []acp.PermissionOption, decision string) (acp.PermissionOption, bool) {
	var want []acp.PermissionOptionKind
	switch decision {
	case wire.DecisionAllow:
		want = []acp.PermissionOptionKind{acp.PermissionOptionKindAllowOnce, acp.PermissionOptionKindAllowAlways}
	case wire.DecisionAllowSession:
		want = []acp.PermissionOptionKind{acp.PermissionOptionKindAllowAlways, acp.PermissionOptionKindAllowOnce}
	case wire.DecisionDeny:
		want = []acp.PermissionOptionKind{acp.PermissionOptionKindRejectOnce, acp.PermissionOptionKindRejectAlways}
	}
	for _, k := range want {
		for _, o := range opts {
			if o.Kind == k {
				return o, true
			}
		}
	}
	return acp.PermissionOption{}, false
}
