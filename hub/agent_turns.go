package hub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"albedo/db"
	"albedo/hub/acphost"
	"albedo/hub/provider"
	"albedo/hub/tools"
	"albedo/wire"
)

// The turn runner's seam to coding agents (hub/acphost runs them): a turn
// of a session whose provider is an acp profile is one prompt of the
// session's agent. Its reply streams as any provider's; its calls (the
// agent's own, and the writes and commands the daemon runs for it) are
// committed as tool_call and tool_result events with rows, as a model's
// are, so that people decide them through the same approvals; its plan,
// thinking and commands' output are the session's status.

// agentTurn runs q's turn on the session's agent.
func (h *Hub) agentTurn(ctx context.Context, ch *channel, q queued, p *provider.ACP, req provider.Request) (string, error) {
	bg := context.WithoutCancel(ctx)
	if h.opts.Agents == nil {
		return "", errors.New("this daemon runs no coding agents (acp profiles)")
	}
	if q.resume {
		return "", h.agentTurnLost(bg, ch, q, p)
	}
	sess, err := h.db.Session(bg, ch.id)
	if err != nil {
		return "", err
	}
	as, err := h.db.AgentSessionOf(bg, ch.id)
	if err != nil {
		return "", err
	}
	sink := &agentSink{h: h, ch: ch, q: q, profile: p.Name(), usage: req.Usage, note: as.Note}
	t := acphost.Turn{Session: ch.id, Profile: p.Name(), Config: p.Agent(), Workspace: sess.Workspace, Note: as.Note, Sink: sink}
	if as.Profile == p.Name() {
		t.Resume = as.AgentSession
	}
	if n := len(req.Messages); n > 0 {
		t.Input = req.Messages[n-1].Text
		t.Transcript = req.Messages[:n-1]
	}
	// The plan shown is this turn's: the last one's stays until it starts.
	h.agentStatus(ch, func(a *wire.AgentStatus) { a.Plan = nil })
	defer h.agentStatus(ch, func(a *wire.AgentStatus) { a.Thought, a.Output = "", nil })
	return h.streamTurn(ctx, ch, q, agentStream{host: h.opts.Agents, turn: t, sink: sink}, req)
}

// agentTurnLost ends a turn the daemon's stop cut off: its agent went
// with the daemon's process, and what it asked or ran with it. Each call
// without a result is said lost, the turn fails, and the agent is told
// at its next prompt.
func (h *Hub) agentTurnLost(ctx context.Context, ch *channel, q queued, p *provider.ACP) error {
	calls, err := h.db.ToolCallsOfTurn(ctx, ch.id, q.turnID)
	if err != nil {
		return err
	}
	var lost []string
	for _, c := range calls {
		if c.State != "" {
			continue
		}
		decide := ""
		if c.Decision == "" {
			decide = wire.ToolCancelled
		}
		if err := h.endCall(ctx, ch, q, c, decide, wire.ToolFailed, "", "lost: the daemon stopped during the call, and the agent's process with it; the agent was not answered"); err != nil && !errors.Is(err, db.ErrDecided) {
			return err
		}
		lost = append(lost, c.Tool)
	}
	note := "your previous turn was cut short: the daemon stopped during it, and your process with it"
	if len(lost) > 0 {
		note += fmt.Sprintf("; your calls that had not ended (%s) were never answered, and albedo ran none of them after that", strings.Join(lost, ", "))
	}
	if _, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error { return tx.NoteAgent(ctx, ch.id, p.Name(), note) }); err != nil {
		return err
	}
	return errors.New("the turn was lost: the daemon stopped while the agent worked, and the agent's process with it; the agent will be told at its next turn")
}

// agentStream is a turn of the agent as the turn runner streams a
// provider: the agent's text is the reply.
type agentStream struct {
	host *acphost.Host
	turn acphost.Turn
	sink *agentSink
}

func (a agentStream) Stream(ctx context.Context, _ provider.Request, emit func(string)) error {
	a.sink.emit = emit
	return a.host.Prompt(ctx, a.turn)
}

func (a agentStream) Author(provider.Request) string { return a.turn.Profile }

// agentSink is the hub's side of acphost.Sink for one turn.
type agentSink struct {
	h       *Hub
	ch      *channel
	q       queued
	profile string
	emit    func(string)
	usage   func(wire.Usage)
	note    string // told the agent at this prompt: cleared once it opened

	mu  sync.Mutex
	seq int // the turn's calls so far
}

var _ acphost.Sink = (*agentSink)(nil)

func (s *agentSink) Opened(ctx context.Context, agentSession, how, reason string) error {
	h := s.h
	_, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		if err := tx.CheckRun(ctx, s.ch.id, s.q.lease); err != nil {
			return err
		}
		if err := tx.SetAgentSession(ctx, db.AgentSession{Session: s.ch.id, Profile: s.profile, AgentSession: agentSession}); err != nil {
			return err
		}
		if how != acphost.OpenedAnew {
			return nil
		}
		_, err := tx.Append(ctx, s.ch.id, wire.Event{Type: wire.EventNotice, TurnID: s.q.turnID, Author: s.profile,
			Text: "The agent starts a new session of its own (" + reason + "); it is told the conversation so far."})
		return err
	})
	if errors.Is(err, db.ErrLeaseLost) {
		return errLeaseLost
	}
	return err
}

func (s *agentSink) Text(delta string) { s.emit(delta) }

func (s *agentSink) Thought(delta string) {
	s.h.agentStatusSoon(s.ch, func(a *wire.AgentStatus) { a.Thought = wire.TailUTF8(a.Thought+delta, wire.MaxThoughtTail) })
}

func (s *agentSink) Plan(entries []wire.PlanEntry) {
	s.h.agentStatus(s.ch, func(a *wire.AgentStatus) { a.Plan = entries })
}

func (s *agentSink) Output(id, tail string) {
	s.h.agentStatusSoon(s.ch, func(a *wire.AgentStatus) {
		if tail == "" {
			a.Output = nil
			return
		}
		a.Output = &wire.ToolOutput{CallID: id, Text: tail}
	})
}

func (s *agentSink) Usage(u wire.Usage) {
	if s.usage != nil {
		s.usage(u)
	}
}

// nextSeq is the next call's place among the turn's.
func (s *agentSink) nextSeq() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq - 1
}

func (s *agentSink) Call(ctx context.Context, c acphost.Call) error {
	r := s.row(c)
	r.Policy, r.Decision, r.Started = wire.PolicyAgent, wire.DecisionAllow, true
	return s.commitCall(ctx, c, r)
}

func (s *agentSink) Propose(ctx context.Context, c acphost.Call, def string) (string, error) {
	policy, approval := s.h.providers.Tools()
	if s.q.named {
		policy = policy.For(wire.MentionName(s.q.who))
	}
	allowed, err := s.h.db.AllowedTools(ctx, s.ch.id)
	if err != nil {
		return "", err
	}
	r := db.ToolCall{Session: s.ch.id, CallID: c.ID, TurnID: s.q.turnID, Tool: c.Tool, Arguments: string(c.Arguments), RequestedAt: time.Now()}
	if !c.Again {
		r = s.row(c)
	}
	r.Policy = policyFor(policy, allowed, c.Tool, tools.Decision(def))
	switch r.Policy {
	case wire.PolicyAsk:
		r.ExpiresAt = r.RequestedAt.Add(approval)
	case wire.PolicyDeny:
		r.Decision = wire.DecisionDeny
	default:
		r.Decision, r.Started = wire.DecisionAllow, true
	}
	if err := s.commitCall(ctx, c, r); err != nil {
		return "", err
	}
	return r.Decision, nil
}

// row is a new call's row.
func (s *agentSink) row(c acphost.Call) db.ToolCall {
	return db.ToolCall{Session: s.ch.id, CallID: c.ID, TurnID: s.q.turnID, Seq: s.nextSeq(), Tool: c.Tool, Arguments: string(c.Arguments),
		RequestedAt: time.Now()}
}

// commitCall commits a call's tool_call event and its row (a call asked
// again: its row changed).
func (s *agentSink) commitCall(ctx context.Context, c acphost.Call, r db.ToolCall) error {
	title := c.Title
	ev := wire.Event{Type: wire.EventToolCall, TurnID: s.q.turnID, InputID: s.q.inputID, CallID: c.ID, Author: s.profile,
		Tool: c.Tool, Arguments: c.Arguments, Policy: r.Policy, Title: &title, Locations: c.Locations, Diff: c.Diff}
	_, err := s.h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		if err := tx.CheckRun(ctx, s.ch.id, s.q.lease); err != nil {
			return err
		}
		out, err := tx.Append(ctx, s.ch.id, ev)
		if err != nil {
			return err
		}
		if c.Again {
			return tx.AskToolCall(ctx, s.ch.id, c.ID, r.Policy, r.Decision, r.RequestedAt, r.ExpiresAt)
		}
		r.Offset = out[0].Offset
		return tx.AddToolCall(ctx, r)
	})
	if errors.Is(err, db.ErrLeaseLost) {
		return errLeaseLost
	}
	return err
}

func (s *agentSink) Await(ctx context.Context, id string) (string, string, error) {
	h, ch := s.h, s.ch
	bg := context.WithoutCancel(ctx)
	for {
		wake := h.approvals.waiter(ch.id) // before the read: a decision after it wakes us
		c, err := h.db.ToolCall(bg, ch.id, id)
		if err != nil {
			return "", "", err
		}
		switch c.Decision {
		case wire.DecisionDeny:
			return c.Decision, c.Error, nil
		case wire.DecisionAllow, wire.DecisionAllowSession, wire.ToolExpired, wire.ToolCancelled:
			return c.Decision, "", nil
		}
		err = h.awaitDecision(ctx, ch, s.q, c, wake)
		if errors.Is(err, errSuspended) {
			// The daemon stops, and the agent with it: the request is
			// answered cancelled, and its call ends so.
			err = h.endCall(ctx, ch, s.q, c, wire.ToolCancelled, wire.ToolCancelled, "", "the daemon stopped while the call waited for a decision")
			if err == nil || errors.Is(err, db.ErrDecided) {
				continue
			}
		}
		if err != nil {
			return "", "", err
		}
	}
}

func (s *agentSink) Result(ctx context.Context, r acphost.Result) error {
	c := db.ToolCall{Session: s.ch.id, CallID: r.ID, TurnID: s.q.turnID, State: r.State, Output: cutOutput(r.Output), Error: cutError(r.Error)}
	ev := resultEvent(c)
	ev.Diff = r.Diff
	return s.h.commitEnd(ctx, s.ch, s.q, c, "", ev) // one ended already (a person denied it) stays as it is
}

func (s *agentSink) Note(ctx context.Context, id, text string) error {
	_, err := s.h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		if err := tx.CheckRun(ctx, s.ch.id, s.q.lease); err != nil {
			return err
		}
		_, err := tx.Append(ctx, s.ch.id, wire.Event{Type: wire.EventNotice, TurnID: s.q.turnID, CallID: id, Author: s.profile, Text: text})
		return err
	})
	return err
}

// agentStatus changes the session's agent status and tells viewers.
func (h *Hub) agentStatus(ch *channel, f func(a *wire.AgentStatus)) {
	ch.mu.Lock()
	f(&ch.run.agent)
	ch.mu.Unlock()
	h.runChanged(ch)
}

// agentStatusSoon changes the session's agent status and tells viewers
// within agentStatusEvery: a stream of thinking or output is a few
// status pushes a second, whatever the agent's rate.
func (h *Hub) agentStatusSoon(ch *channel, f func(a *wire.AgentStatus)) {
	ch.mu.Lock()
	f(&ch.run.agent)
	later := !ch.run.agentSoon
	ch.run.agentSoon = true
	ch.mu.Unlock()
	if later {
		time.AfterFunc(agentStatusEvery, func() {
			ch.mu.Lock()
			ch.run.agentSoon = false
			ch.mu.Unlock()
			h.runChanged(ch)
		})
	}
}

// agentStatusEvery is how often a stream of an agent's status changes
// reaches viewers.
const agentStatusEvery = 100 * time.Millisecond
