package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"albedo/db"
	"albedo/hub/provider"
	"albedo/hub/tools"
	"albedo/wire"
)

// The turn runner's seam to tools (hub/tools holds the names, the policy
// and the sources): a turn whose model calls tools is a series of steps.
// Each step's response is streamed; its calls are committed as tool_call
// events (with what the model said before them) and rows (db/toolcalls.go);
// each is decided (by the policy, or by people: approvals.go), run
// (bot_tools.go) and answered with a tool_result event; and the provider
// is asked again with the calls and results, until it answers in text.
// Nothing of a call lives only in memory: a restart resumes the turn from
// its rows (resumeTurns).

// errSuspended ends a turn that waits for people's decisions when the
// daemon stops: nothing more is committed, and the next start resumes it.
var errSuspended = errors.New("suspended until the daemon starts again")

// steps runs p for q's turn until the model answers in text, running the
// tools it calls between its responses. It returns the last response's
// text, the tokens its calls and results add to the transcript (as
// compaction counts them), and the error that ended the turn.
func (h *Hub) steps(ctx context.Context, ch *channel, q queued, p provider.Provider, req provider.Request) (_ string, calls int, _ error) {
	if a, ok := p.(*provider.ACP); ok {
		text, err := h.agentTurn(ctx, ch, q, a, req) // an agent runs its own tools
		return text, 0, err
	}
	if _, ok := p.(provider.ToolCaller); !ok {
		text, err := h.streamTurn(ctx, ch, q, p, req) // echo, bots: no tools
		return text, 0, err
	}
	text, added, err := h.toolSteps(ctx, ch, q, p, req)
	for _, m := range added {
		calls += msgTokens(m.Text)
		for _, c := range m.Calls {
			calls += provider.Tokens(c.Arguments)
		}
	}
	return text, calls, err
}

// toolSteps is steps for a provider that calls tools: it returns the
// messages the turn's calls and results added to its transcript too.
func (h *Hub) toolSteps(ctx context.Context, ch *channel, q queued, p provider.Provider, req provider.Request) (string, []provider.Message, error) {
	tc := p.(provider.ToolCaller)
	limits := tc.ToolLimits()
	usage := req.Usage
	var total *wire.Usage
	defer func() {
		if total != nil && usage != nil {
			usage(*total)
		}
	}()
	base := req.Messages
	// The calls this runner committed already begun (those the policy
	// allows): started in their own commit, not one more (commitCalls).
	fresh := map[string]bool{}
	for first := true; ; first = false {
		calls, err := h.db.ToolCallsOfTurn(context.WithoutCancel(ctx), ch.id, q.turnID)
		if err != nil {
			return "", nil, err
		}
		if first { // what the responses before a restart cost, kept with their calls
			for _, c := range calls {
				total = addUsage(total, c.StepUsage)
			}
		}
		if slices.ContainsFunc(calls, func(c db.ToolCall) bool { return c.State == "" }) {
			if err := h.settle(ctx, ch, q, calls, limits, fresh); err != nil {
				return "", nil, err
			}
			// Their results, as committed.
			if calls, err = h.db.ToolCallsOfTurn(context.WithoutCancel(ctx), ch.id, q.turnID); err != nil {
				return "", nil, err
			}
		}
		req.Messages = append(base[:len(base):len(base)], callMessages(calls)...)
		// Offered afresh at each step: a bot's tools come and go with its
		// connections (and a resumed turn starts before they are back).
		byAPI, err := h.offerTools(ctx, ch.id, &req)
		if err != nil {
			return "", nil, err
		}
		var made []provider.ToolCall
		req.Call = func(c provider.ToolCall) { made = append(made, c) }
		var stepUsage *wire.Usage
		req.Usage = func(u wire.Usage) { stepUsage = &u }
		text, err := h.streamTurn(ctx, ch, q, p, req)
		total = addUsage(total, stepUsage)
		if err != nil || len(made) == 0 {
			return text, req.Messages[len(base):], err
		}
		if len(calls)+len(made) > limits.MaxCalls {
			return text, req.Messages[len(base):], fmt.Errorf("the model asked for more than %d tool calls in one turn (max_tool_calls); the turn stops here", limits.MaxCalls)
		}
		if err := h.commitCalls(ctx, ch, q, step{n: stepOf(calls), text: text, usage: stepUsage}, made, byAPI, len(calls), fresh); err != nil {
			return text, req.Messages[len(base):], err
		}
	}
}

// offerTools sets req's tools to those the session offers now, and
// returns them by the names the provider's API knows them by.
func (h *Hub) offerTools(ctx context.Context, session string, req *provider.Request) (map[string]tools.Offer, error) {
	offers, err := h.offers(ctx, session)
	if err != nil {
		return nil, err
	}
	byAPI := make(map[string]tools.Offer, len(offers))
	req.Tools = make([]provider.Tool, 0, len(offers))
	for _, o := range offers {
		byAPI[o.API] = o
		req.Tools = append(req.Tools, provider.Tool{Name: o.API, Description: o.Spec.Description, Schema: o.Spec.InputSchema})
	}
	return byAPI, nil
}

// offers lists the tools a session offers its models now: none when it
// is set so (PATCH {"tools":"none"}).
func (h *Hub) offers(ctx context.Context, session string) ([]tools.Offer, error) {
	s, err := h.db.Session(context.WithoutCancel(ctx), session)
	if err != nil || s.Tools == wire.ToolsNone {
		return nil, err
	}
	local := h.toolSources.Offers(session)
	out := append(local, h.remoteOffers(session, local)...)
	if h.opts.MCP != nil {
		out = append(out, h.opts.MCP.Offers(ctx, session, h.providers.MCPServers(s.Provider))...)
	}
	return tools.Unique(out), nil
}

// stepOf is the number of the next step of a turn whose calls are calls.
func stepOf(calls []db.ToolCall) int {
	if len(calls) == 0 {
		return 0
	}
	return calls[len(calls)-1].Step + 1
}

// addUsage adds one response's usage to a turn's (nil: none reported).
func addUsage(total, u *wire.Usage) *wire.Usage {
	if u == nil {
		return total
	}
	if total == nil {
		c := *u
		return &c
	}
	t := *total
	t.InputTokens += u.InputTokens
	t.OutputTokens += u.OutputTokens
	t.CachedTokens = addOpt(t.CachedTokens, u.CachedTokens)
	t.ReasoningTokens = addOpt(t.ReasoningTokens, u.ReasoningTokens)
	return &t
}

func addOpt(a, b *int64) *int64 {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	s := *a + *b
	return &s
}

// callMessages are a turn's calls as the provider is sent them: for each
// step, the model's text and calls, then each ended call's result.
func callMessages(calls []db.ToolCall) []provider.Message {
	var out []provider.Message
	for i, c := range calls {
		if i == 0 || c.Step != calls[i-1].Step {
			out = append(out, provider.Message{Role: wire.RoleAssistant, Text: c.StepText})
		}
		last := &out[len(out)-1]
		last.Calls = append(last.Calls, provider.ToolCall{ID: c.CallID, Name: tools.APIName(c.Tool), Arguments: argsOrEmpty(c.Arguments)})
		if i == len(calls)-1 || calls[i+1].Step != c.Step {
			for _, r := range calls[firstOfStep(calls, i) : i+1] {
				if r.State != "" {
					out = append(out, provider.Message{Role: provider.RoleTool, CallID: r.CallID, Text: modelResult(r.State, r.Output, r.Error)})
				}
			}
		}
	}
	return out
}

func firstOfStep(calls []db.ToolCall, i int) int {
	for i > 0 && calls[i-1].Step == calls[i].Step {
		i--
	}
	return i
}

func argsOrEmpty(a string) string {
	if a == "" {
		return "{}"
	}
	return a
}

// modelResult is what the model is told of a call's end: its state, its
// output and its error.
func modelResult(state, output, errText string) string {
	switch state {
	case wire.ToolCompleted:
		return output
	case wire.ToolDenied, wire.ToolExpired:
		return "The call was not run: " + errText
	case wire.ToolCancelled:
		return "The call was cancelled: " + errText
	}
	if output != "" {
		return output + "\n\nThe tool failed: " + errText
	}
	return "The tool failed: " + errText
}

// maxToolNameBytes bounds the name a model gave a tool not offered, as
// its tool_call event keeps it.
const maxToolNameBytes = 256

// step is one of a turn's responses that called tools: its number (from
// 0), what the model said before its calls, and what it cost.
type step struct {
	n     int
	text  string
	usage *wire.Usage
}

// commitCalls commits one response's calls: a tool_call event and a row
// each, the first with the response's text, and the result of each call
// that cannot run (a tool not offered, arguments that are no JSON object,
// a policy that denies it). The streamed text is then over: the next
// response streams afresh.
func (h *Hub) commitCalls(ctx context.Context, ch *channel, q queued, st step, made []provider.ToolCall, byAPI map[string]tools.Offer, seq int, fresh map[string]bool) error {
	bg := context.WithoutCancel(ctx)
	policy, approval := h.providers.Tools()
	allowed, err := h.db.AllowedTools(bg, ch.id)
	if err != nil {
		return err
	}
	var author, authorID string
	if q.named { // among participants, each call is its participant's
		author, authorID = wire.MentionName(q.who), wire.ParticipantID(q.who)
		policy = policy.For(author)
	} else if sess, err := h.db.Session(bg, ch.id); err == nil {
		if p, err := h.providers.Get(sess.Provider); err == nil {
			author = p.Author(provider.Request{Model: sess.Model})
		}
	}
	now := time.Now()
	rows := make([]db.ToolCall, len(made))
	evs := make([]wire.Event, 0, 2*len(made))
	var results []wire.Event
	for i, m := range made {
		r := db.ToolCall{Session: ch.id, CallID: uuid.Must(uuid.NewV7()).String(), TurnID: q.turnID, Seq: seq + i, Step: st.n,
			RequestedAt: now}
		ev := wire.Event{Type: wire.EventToolCall, TurnID: q.turnID, InputID: q.inputID, CallID: r.CallID, Author: author, AuthorID: authorID}
		if i == 0 {
			r.StepText, ev.Text, r.StepUsage = st.text, st.text, st.usage
		}
		args := classifyCall(&r, m, byAPI, policy, allowed, now.Add(approval))
		ev.Tool, ev.Policy = r.Tool, r.Policy
		if r.Arguments != "" {
			ev.Arguments = args
		}
		if r.Decision == wire.PolicyAllow && r.State == "" {
			r.Started = true // it runs as soon as this commits
		}
		rows[i] = r
		evs = append(evs, ev)
		if r.State != "" {
			results = append(results, resultEvent(r))
		}
	}
	_, err = h.db.Writer().Do(bg, func(tx *db.Tx) error {
		if err := tx.CheckRun(bg, ch.id, q.lease); err != nil {
			return err
		}
		out, err := tx.Append(bg, ch.id, append(evs, results...)...)
		if err != nil {
			return err
		}
		for i := range rows {
			rows[i].Offset = out[i].Offset
			if err := tx.AddToolCall(bg, rows[i]); err != nil {
				return err
			}
		}
		return tx.SetPartial(bg, ch.id, q.inputID, "")
	})
	if err != nil {
		if errors.Is(err, db.ErrLeaseLost) {
			return errLeaseLost
		}
		return fmt.Errorf("commit the model's tool calls: %w", err)
	}
	for _, r := range rows {
		if r.Started {
			fresh[r.CallID] = true
		}
	}
	h.streamOver(ch, q.turnID)
	return nil
}

// classifyCall fills r, a call's row, for the model's call m: the tool
// it names (the model's name for one not offered), its arguments, the
// policy, and for a call that cannot run (not offered, arguments too
// long or no JSON object, denied by the rules) its result; a call that
// asks expires at expires. It returns the arguments as the event keeps
// them (compact; nil when they are no JSON object).
func classifyCall(r *db.ToolCall, m provider.ToolCall, byAPI map[string]tools.Offer, policy tools.Policy, allowed map[string]bool, expires time.Time) json.RawMessage {
	offer, known := byAPI[m.Name]
	args := wire.CompactJSON([]byte(m.Arguments))
	r.Tool = offer.Full
	switch {
	case !known:
		r.Tool = strings.ToValidUTF8(m.Name[:min(len(m.Name), maxToolNameBytes)], "?")
		r.Policy, r.Decision, r.State = wire.PolicyDeny, wire.PolicyDeny, wire.ToolFailed
		r.Error = fmt.Sprintf("no tool named %q is offered in this session", r.Tool)
		return args
	case len(m.Arguments) > provider.MaxArgumentBytes:
		r.Policy, r.Decision, r.State = wire.PolicyDeny, wire.PolicyDeny, wire.ToolFailed
		r.Error = fmt.Sprintf("the arguments passed the limit of %d bytes", provider.MaxArgumentBytes)
		return nil
	case len(args) == 0 || args[0] != '{':
		r.Policy, r.Decision, r.State = wire.PolicyDeny, wire.PolicyDeny, wire.ToolFailed
		r.Error = "the arguments are not a JSON object"
		return nil
	}
	r.Arguments = string(args)
	r.Policy = policyFor(policy, allowed, offer.Full, offer.Default)
	switch r.Policy {
	case wire.PolicyAsk:
		r.ExpiresAt = expires
	case wire.PolicyDeny:
		r.Decision, r.State, r.Error = wire.PolicyDeny, wire.ToolDenied, "the daemon's policy denies "+offer.Full
	default:
		r.Decision = wire.PolicyAllow
	}
	return args
}

// policyFor is the policy a call of tool gets: the rules' (def when none
// matches), or allow where they ask and a person allowed the tool for
// the session.
func policyFor(policy tools.Policy, allowed map[string]bool, tool string, def tools.Decision) string {
	p := string(policy.OfOr(tool, def))
	if p == wire.PolicyAsk && allowed[tool] {
		return wire.PolicyAllow
	}
	return p
}

// streamOver ends the streamed text of a turn's response, now committed
// with its calls: viewers' replies in progress start over, empty.
func (h *Hub) streamOver(ch *channel, turn string) {
	ch.mu.Lock()
	ch.run.streamText.Reset()
	ch.mu.Unlock()
	h.replaceText(ch, turn, "")
	h.relayRestart(ch.id, turn)
}

// resultEvent is the tool_result event of a call's row, ended.
func resultEvent(r db.ToolCall) wire.Event {
	return wire.Event{Type: wire.EventToolResult, TurnID: r.TurnID, CallID: r.CallID, State: r.State, Text: r.Output, Error: r.Error}
}

// settle brings each call of calls that has no result to its end, all at
// once: waits for people's decisions, runs what is allowed, and commits
// each result. An interrupt cancels what has not ended; a stop of the
// daemon leaves the calls that wait for people as they are
// (errSuspended). fresh are the calls this runner began with their
// commit.
func (h *Hub) settle(ctx context.Context, ch *channel, q queued, calls []db.ToolCall, limits provider.ToolLimits, fresh map[string]bool) error {
	var wg sync.WaitGroup
	errs := make([]error, len(calls))
	for i, c := range calls {
		if c.State != "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = h.settleCall(ctx, ch, q, c, limits, fresh[c.CallID])
		}()
	}
	wg.Wait()
	if errors.Is(context.Cause(ctx), errLeaseLost) {
		return errLeaseLost
	}
	for _, err := range errs {
		if errors.Is(err, errSuspended) {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.Join(errs...)
}

// settleCall brings one call to its end. fresh says this runner began
// it (its row says started from its commit): a call found begun that is
// not fresh began before a restart, and may or may not have acted.
func (h *Hub) settleCall(ctx context.Context, ch *channel, q queued, c db.ToolCall, limits provider.ToolLimits, fresh bool) error {
	bg := context.WithoutCancel(ctx)
	for {
		wake := h.approvals.waiter(ch.id) // before the read: a decision after it wakes us
		cur, err := h.db.ToolCall(bg, ch.id, c.CallID)
		if err != nil {
			return err
		}
		c = cur
		if c.State != "" {
			return nil
		}
		switch c.Decision {
		case "":
			if err := h.awaitDecision(ctx, ch, q, c, wake); err != nil {
				return err
			}
			continue
		case wire.DecisionDeny:
			by := "a person"
			if c.DecidedBy != "" {
				by = c.DecidedBy
			}
			return h.endCall(ctx, ch, q, c, "", wire.ToolDenied, "", "denied by "+by)
		case wire.ToolExpired, wire.ToolCancelled:
			return h.endCall(ctx, ch, q, c, "", c.Decision, "", "no result")
		}
		if ctx.Err() != nil {
			return h.endCall(ctx, ch, q, c, "", wire.ToolCancelled, "", "the turn was interrupted before the call ran")
		}
		if c.Started && !fresh {
			return h.endCall(ctx, ch, q, c, "", wire.ToolFailed, "", "the daemon stopped while the call ran: it may or may not have acted")
		}
		return h.runCall(ctx, ch, q, c, limits)
	}
}

// awaitDecision waits, in phase approval, for a decision on c, its
// expiry, or the turn's end; it commits an expiry or a cancel itself.
func (h *Hub) awaitDecision(ctx context.Context, ch *channel, q queued, c db.ToolCall, wake <-chan struct{}) error {
	h.pendingChanged(ch, +1)
	defer h.pendingChanged(ch, -1)
	expiry := time.NewTimer(time.Until(c.ExpiresAt))
	defer expiry.Stop()
	// A notice of another node's decision may be lost: the store is read
	// again now and then all the same.
	again := time.NewTimer(recheckDecisions)
	defer again.Stop()
	select {
	case <-wake:
		return nil
	case <-again.C:
		return nil
	case <-expiry.C:
		err := h.endCall(ctx, ch, q, c, wire.ToolExpired, wire.ToolExpired, "",
			fmt.Sprintf("no one decided within %s", c.ExpiresAt.Sub(c.RequestedAt).Round(time.Second)))
		if errors.Is(err, db.ErrDecided) {
			return nil // a decision came first
		}
		return err
	case <-ctx.Done():
		var intr *interruption
		if errors.As(context.Cause(ctx), &intr) && intr.reason == wire.ReasonDaemonShutdown {
			return errSuspended
		}
		if errors.Is(context.Cause(ctx), errLeaseLost) {
			return errLeaseLost
		}
		err := h.endCall(ctx, ch, q, c, wire.ToolCancelled, wire.ToolCancelled, "", "the turn was interrupted")
		if errors.Is(err, db.ErrDecided) {
			return nil
		}
		return err
	}
}

// recheckDecisions is how often a pending call's row is read again.
const recheckDecisions = 10 * time.Second

// pendingChanged counts a call that waits for a decision, or no longer
// does: the session's phase is approval while any does.
func (h *Hub) pendingChanged(ch *channel, d int) {
	ch.mu.Lock()
	ch.run.pending += d
	if ch.run.running && ch.run.turnID != "" && (ch.run.phase == wire.PhaseRunning || ch.run.phase == wire.PhaseApproval) {
		ch.run.phase = wire.PhaseRunning
		if ch.run.pending > 0 {
			ch.run.phase = wire.PhaseApproval
		}
	}
	ch.mu.Unlock()
	h.runChanged(ch)
}

// runCall runs an allowed call and commits its result.
func (h *Hub) runCall(ctx context.Context, ch *channel, q queued, c db.ToolCall, limits provider.ToolLimits) error {
	bg := context.WithoutCancel(ctx)
	if !c.Started { // a call the policy allowed was started with its commit
		if _, err := h.db.Writer().Do(bg, func(tx *db.Tx) error { return tx.StartToolCall(bg, ch.id, c.CallID) }); err != nil {
			return err
		}
	}
	rctx, cancel := context.WithTimeout(ctx, limits.Timeout)
	defer cancel()
	out := h.runTool(rctx, q, c)
	switch {
	case ctx.Err() != nil:
		return h.endCall(ctx, ch, q, c, "", wire.ToolCancelled, cutOutput(out.output), "the turn was interrupted while the call ran")
	case rctx.Err() != nil:
		return h.endCall(ctx, ch, q, c, "", wire.ToolFailed, cutOutput(out.output), fmt.Sprintf("the tool did not answer within %s (tool_timeout)", limits.Timeout))
	}
	c.State, c.Output, c.Error = wire.ToolCompleted, cutOutput(out.output), ""
	if out.err != "" {
		c.State, c.Error = wire.ToolFailed, cutError(out.err)
	}
	ev := resultEvent(c)
	ev.Attachments = out.files
	// The row, which the turn's next step is sent, names the files; the
	// event carries them, and later turns are sent them from it.
	c.Output += fileNames(out.files)
	return h.commitEnd(ctx, ch, q, c, "", ev)
}

// cutOutput cuts a tool's output at wire.MaxToolOutput bytes, saying so.
func cutOutput(s string) string { return wire.CutNote(s, wire.MaxToolOutput, "output") }

// cutError cuts why a call failed at wire.MaxToolError bytes, saying so:
// a source's words (an MCP server's error result, a bot's error) are
// bounded as its output is.
func cutError(s string) string { return wire.CutNote(s, wire.MaxToolError, "error") }

// runTool runs c with its source; it returns the output, for a call that
// failed why, and the files its result carries.
func (h *Hub) runTool(ctx context.Context, q queued, c db.ToolCall) toolOut {
	src, owner, name, ok := tools.ParseFull(c.Tool)
	switch {
	case ok && src == tools.SourceMCP && h.opts.MCP != nil:
		r := h.opts.MCP.Call(ctx, owner, name, json.RawMessage(argsOrEmpty(c.Arguments)))
		files, notes := h.keepFiles(ctx, "mcp:"+owner, r.Files)
		return toolOut{output: r.Output + notes, err: r.Error, files: files}
	case !ok || src != tools.SourceBot:
		return toolOut{err: fmt.Sprintf("no source runs %q", c.Tool)}
	}
	return h.runBotTool(ctx, owner, wire.ToolPush{Op: wire.PushTool, Session: c.Session, TurnID: q.turnID, CallID: c.CallID, Tool: name,
		Arguments: []byte(argsOrEmpty(c.Arguments))})
}

// endCall commits a call's result: decide, if set, is the decision it
// takes first (expired, cancelled), which a person's decision may have
// beaten (db.ErrDecided); a result already committed is db.ErrDecided
// too.
func (h *Hub) endCall(ctx context.Context, ch *channel, q queued, c db.ToolCall, decide, state, output, errText string) error {
	c.State, c.Output, c.Error = state, output, errText
	return h.commitEnd(ctx, ch, q, c, decide, resultEvent(c))
}

// commitEnd is endCall's commit of c's result as ev (resultEvent(c), or
// that with more: a coding agent's diff).
func (h *Hub) commitEnd(ctx context.Context, ch *channel, q queued, c db.ToolCall, decide string, ev wire.Event) error {
	bg := context.WithoutCancel(ctx)
	_, err := h.db.Writer().Do(bg, func(tx *db.Tx) error {
		if err := tx.CheckRun(bg, ch.id, q.lease); err != nil {
			return err
		}
		if decide != "" {
			if _, err := tx.DecideToolCall(bg, ch.id, c.CallID, decide, ""); err != nil {
				return err
			}
		}
		if err := tx.EndToolCall(bg, ch.id, c.CallID, c.State, c.Output, c.Error); err != nil {
			return err
		}
		_, err := tx.Append(bg, ch.id, ev)
		return err
	})
	if errors.Is(err, db.ErrLeaseLost) {
		return errLeaseLost
	}
	if errors.Is(err, db.ErrDecided) && decide == "" {
		return nil // another result came first: the call has ended
	}
	return err
}
