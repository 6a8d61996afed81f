package acphost

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	acp "github.com/coder/acp-go-sdk"

	"albedo/wire"
)

// turnState is what a turn knows of the agent's calls: each by the
// agent's id, with albedo's, and whether its tool_call and tool_result
// are committed. A call the agent announces as pending is held until it
// runs, asks for permission, or the turn ends, so that its one tool_call
// event says how it was decided.
type turnState struct {
	a    *agent
	t    Turn
	ctx  context.Context // the turn's: an interrupt ends it
	over chan struct{}   // closed when the agent passed max_tool_calls

	text *textPump // the reply's pieces, merged while the sink is busy

	mu       sync.Mutex
	calls    map[acp.ToolCallId]*call
	order    []*call
	n        int // calls committed
	overOnce sync.Once
}

// call is one of the agent's calls in a turn.
type call struct {
	agentID   acp.ToolCallId
	id        string // albedo's
	kind      string
	title     string
	status    acp.ToolCallStatus
	input     any
	locations []acp.ToolCallLocation
	content   []acp.ToolCallContent
	committed bool          // its tool_call event is claimed (written or being written)
	ready     chan struct{} // closed once the tool_call event is written
	ended     bool          // its result is claimed
	asked     bool          // it asked for permission
	seen      chan struct{} // closed at its first session/update
	diff      string        // the diff its tool_call carries: its result repeats none that is the same
}

func newTurnState(a *agent, t Turn, ctx context.Context) *turnState {
	return &turnState{a: a, t: t, ctx: ctx, over: make(chan struct{}), calls: map[acp.ToolCallId]*call{}, text: newTextPump(t.Sink)}
}

// textPump hands the reply's pieces to the sink from a goroutine of its
// own, merged while the sink is busy: the SDK handles updates one at a
// time from a queue it closes the connection at when full, so a handler
// that waited for every viewer of a fast agent's pieces could cut a
// healthy agent off.
type textPump struct {
	sink Sink
	mu   sync.Mutex
	buf  strings.Builder
	wake chan struct{}
	done chan struct{}
	stop chan struct{}
}

func newTextPump(s Sink) *textPump {
	p := &textPump{sink: s, wake: make(chan struct{}, 1), done: make(chan struct{}), stop: make(chan struct{})}
	go p.run()
	return p
}

func (p *textPump) add(s string) {
	p.mu.Lock()
	p.buf.WriteString(s)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *textPump) run() {
	defer close(p.done)
	for {
		select {
		case <-p.wake:
		case <-p.stop:
			p.flush()
			return
		}
		p.flush()
	}
}

func (p *textPump) flush() {
	p.mu.Lock()
	s := p.buf.String()
	p.buf.Reset()
	p.mu.Unlock()
	if s != "" {
		p.sink.Text(s)
	}
}

// close hands what is left to the sink and ends the pump.
func (p *textPump) close() {
	close(p.stop)
	<-p.done
}

// record returns the call of id, new if unknown; nil once the turn holds
// as many as it may.
func (ts *turnState) record(id acp.ToolCallId) *call {
	if c := ts.calls[id]; c != nil {
		return c
	}
	if len(ts.order) >= 2*ts.a.cfg.MaxCalls {
		ts.overflow()
		return nil
	}
	c := &call{agentID: id, id: newID(), kind: string(acp.ToolKindOther), ready: make(chan struct{}), seen: make(chan struct{})}
	ts.calls[id] = c
	ts.order = append(ts.order, c)
	return c
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// overflow cancels the turn: the agent passed max_tool_calls.
func (ts *turnState) overflow() { ts.overOnce.Do(func() { close(ts.over) }) }

// claimCommit claims c's tool_call event; false if it is claimed or the
// turn has as many calls as it may.
func (ts *turnState) claimCommit(c *call) bool {
	if c.committed {
		return false
	}
	if ts.n >= ts.a.cfg.MaxCalls {
		ts.overflow()
		return false
	}
	ts.n++
	c.committed = true
	return true
}

// update handles one session/update of the running prompt.
func (ts *turnState) update(u acp.SessionUpdate) {
	s := ts.t.Sink
	switch {
	case u.AgentMessageChunk != nil:
		if txt := blockText(u.AgentMessageChunk.Content); txt != "" {
			ts.text.add(txt)
		}
	case u.AgentThoughtChunk != nil:
		if txt := blockText(u.AgentThoughtChunk.Content); txt != "" {
			s.Thought(txt)
		}
	case u.Plan != nil:
		s.Plan(planOf(u.Plan.Entries))
	case u.UsageUpdate != nil && u.UsageUpdate.Cost != nil:
		// Cost alone, without tokens: the prompt's answer carries the
		// tokens where the agent reports them.
	case u.ToolCall != nil:
		tc := u.ToolCall
		ts.changed(tc.ToolCallId, func(c *call) {
			c.kind, c.title, c.status, c.input = string(tc.Kind), tc.Title, tc.Status, tc.RawInput
			c.locations, c.content = tc.Locations, tc.Content
		})
	case u.ToolCallUpdate != nil:
		tu := u.ToolCallUpdate
		ts.changed(tu.ToolCallId, func(c *call) { merge(c, toolCallUpdate(*tu)) })
	}
}

// toolCallUpdate is a session/update's call update as the one a
// permission request carries.
func toolCallUpdate(u acp.SessionToolCallUpdate) acp.ToolCallUpdate {
	return acp.ToolCallUpdate{ToolCallId: u.ToolCallId, Kind: u.Kind, Title: u.Title, Status: u.Status, RawInput: u.RawInput,
		RawOutput: u.RawOutput, Locations: u.Locations, Content: u.Content}
}

// merge applies an update's fields to c.
func merge(c *call, u acp.ToolCallUpdate) {
	if u.Kind != nil {
		c.kind = string(*u.Kind)
	}
	if u.Title != nil {
		c.title = *u.Title
	}
	if u.Status != nil {
		c.status = *u.Status
	}
	if u.RawInput != nil {
		c.input = u.RawInput
	}
	if u.Locations != nil {
		c.locations = u.Locations
	}
	if u.Content != nil {
		c.content = u.Content
	}
}

// changed applies f to the call of id and commits what its status now
// says: a call that runs or ran is the agent's own (committed with
// policy agent) unless it asked; one that ended gets its result.
func (ts *turnState) changed(id acp.ToolCallId, f func(c *call)) {
	ts.mu.Lock()
	c := ts.record(id)
	if c == nil {
		ts.mu.Unlock()
		return
	}
	f(c)
	select {
	case <-c.seen:
	default:
		close(c.seen)
	}
	commit := c.status != "" && c.status != acp.ToolCallStatusPending && ts.claimCommit(c)
	end := (c.status == acp.ToolCallStatusCompleted || c.status == acp.ToolCallStatusFailed) && c.committed && !c.ended
	if end {
		c.ended = true
	}
	snap := ts.snapshot(c)
	if commit {
		c.diff = snap.call().Diff
	}
	snap.callDiff = c.diff
	ts.mu.Unlock()
	bg := context.WithoutCancel(ts.ctx)
	if commit {
		if err := ts.t.Sink.Call(bg, snap.call()); err != nil {
			ts.a.host.log.Warn("commit an agent's tool call", "session", ts.a.session, "err", err)
		}
		close(c.ready)
	}
	if end {
		<-c.ready
		state := wire.ToolCompleted
		if snap.status == acp.ToolCallStatusFailed {
			state = wire.ToolFailed
		}
		ts.result(bg, snap, state, "")
	}
}

// result commits snap's end.
func (ts *turnState) result(ctx context.Context, snap callSnap, state, errText string) {
	r := Result{ID: snap.id, State: state, Output: ts.a.outputOf(snap.content), Diff: diffOf(snap.content, ts.a.workspace), Error: errText}
	if r.Diff == snap.callDiff {
		r.Diff = "" // its tool_call has it
	}
	if state == wire.ToolFailed && r.Error == "" {
		r.Error = "the agent says the call failed"
	}
	if err := ts.t.Sink.Result(ctx, r); err != nil {
		ts.a.host.log.Warn("commit an agent's tool result", "session", ts.a.session, "err", err)
	}
}

// finish ends what the prompt left open: a call never committed is
// committed with a result; a committed one with none gets state (or
// completed, when the agent said so).
func (ts *turnState) finish(ctx context.Context, state, errText string) {
	ts.mu.Lock()
	var open []*call
	for _, c := range ts.order {
		if !c.ended {
			open = append(open, c)
		}
	}
	ts.mu.Unlock()
	for _, c := range open {
		ts.mu.Lock()
		commit := ts.claimCommit(c)
		if c.ended || !c.committed { // ended, or never in the log (past max_tool_calls)
			ts.mu.Unlock()
			continue
		}
		c.ended = true
		snap := ts.snapshot(c)
		if commit {
			c.diff = snap.call().Diff
		}
		snap.callDiff = c.diff
		ts.mu.Unlock()
		if commit {
			_ = ts.t.Sink.Call(ctx, snap.call())
			close(c.ready)
		}
		select {
		case <-c.ready:
		case <-time.After(stopGrace):
			continue // its commit is stuck elsewhere; nothing to end
		}
		st, why := state, errText
		switch {
		case snap.status == acp.ToolCallStatusCompleted:
			st, why = wire.ToolCompleted, ""
		case snap.status == acp.ToolCallStatusFailed:
			st, why = wire.ToolFailed, ""
		case state == wire.ToolCompleted:
			st, why = wire.ToolCancelled, "the agent ended its turn without saying how the call ended"
		}
		ts.result(ctx, snap, st, why)
	}
}

// callSnap is a call's fields, copied under the turn's lock.
type callSnap struct {
	id, kind, title string
	status          acp.ToolCallStatus
	input           any
	locations       []acp.ToolCallLocation
	content         []acp.ToolCallContent
	workspace       string
	callDiff        string // the diff its tool_call carried
}

func (ts *turnState) snapshot(c *call) callSnap {
	return callSnap{id: c.id, kind: c.kind, title: c.title, status: c.status, input: c.input, locations: c.locations,
		content: c.content, workspace: ts.a.workspace}
}

// call is the snapshot as the log keeps a call: tool acp:KIND, the
// agent's title, its input as arguments, its files, its diff.
func (s callSnap) call() Call {
	return Call{ID: s.id, Tool: ToolPrefix + toolKind(s.kind), Title: wire.CutUTF8(s.title, wire.MaxToolTitleBytes), Arguments: argumentsOf(s.input),
		Locations: locationsOf(s.locations), Diff: diffOf(s.content, s.workspace)}
}

// argumentsOf is an agent's raw input as a call's arguments: the object
// it is, or {"input": it}; {} when it is too long or none.
func argumentsOf(in any) json.RawMessage {
	if in == nil {
		return json.RawMessage(`{}`)
	}
	b, err := json.Marshal(in)
	if err != nil || len(b) > maxArgumentBytes {
		return json.RawMessage(`{}`)
	}
	if len(b) > 0 && b[0] == '{' {
		return b
	}
	w, _ := json.Marshal(map[string]json.RawMessage{"input": b})
	return w
}

// maxArgumentBytes bounds a call's arguments as the log keeps them.
const maxArgumentBytes = 64 << 10
