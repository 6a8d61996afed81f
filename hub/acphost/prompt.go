package acphost

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"albedo/hub/provider"
	"albedo/wire"
)

// errAgentExited fails a turn whose agent ended mid-prompt.
var errAgentExited = errors.New("the agent exited")

// prompt sends t's input as session/prompt and relays what the agent
// does until the prompt ends.
func (a *agent) prompt(ctx context.Context, t Turn) error {
	ts := newTurnState(a, t, ctx)
	a.cl.setTurn(ts)
	defer a.cl.setTurn(nil)
	defer ts.text.close() // before the turn's end is committed, the reply is whole

	text := t.Input
	if a.tell {
		text = transcriptText(t.Transcript) + text
		a.tell = false
	}
	if t.Note != "" {
		text = "[albedo: " + t.Note + "]\n\n" + text
	}
	ans, why := a.ask(ctx, ts, text)
	bg := context.WithoutCancel(ctx)
	a.terminals.killAll() // a command outlives no turn: its result lands before the turn's end
	if ans.err != nil {
		return a.failed(bg, ts, ans.err, why)
	}
	if u := ans.res.Usage; u != nil {
		t.Sink.Usage(usageOf(*u))
	}
	return ts.ended(bg, ans.res.StopReason, why)
}

// answer is the agent's answer to a prompt.
type answer struct {
	res acp.PromptResponse
	err error
}

// ask sends the prompt and waits for its answer. An interrupt (ctx), or
// the agent passing max_tool_calls, sends session/cancel, whose answer
// is waited for cancelGrace, after which the agent is stopped; why is
// what cancelled it, nil for nothing.
func (a *agent) ask(ctx context.Context, ts *turnState, text string) (answer, error) {
	pctx, pcancel := context.WithCancel(context.Background())
	defer pcancel()
	done := make(chan answer, 1)
	go func() {
		res, err := a.conn.Prompt(pctx, acp.PromptRequest{SessionId: a.sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
		done <- answer{res, err}
	}()
	var why error
	select {
	case ans := <-done:
		return ans, nil
	case <-ctx.Done():
		why = context.Cause(ctx)
	case <-ts.over:
		why = fmt.Errorf("the agent made more than %d tool calls in one turn (max_tool_calls); the turn was cancelled there", a.cfg.MaxCalls)
	}
	// The agent answers the prompt with stopReason cancelled once it has
	// stopped.
	_ = a.conn.Cancel(context.Background(), acp.CancelNotification{SessionId: a.sid})
	select {
	case ans := <-done:
		return ans, why
	case <-time.After(cancelGrace):
		pcancel()
		a.host.forget(a)
		a.stop("it did not stop within " + cancelGrace.String() + " of session/cancel")
		return <-done, why
	}
}

// failed ends a prompt that got no answer: the agent exited, its
// connection closed, or it answered an error.
func (a *agent) failed(ctx context.Context, ts *turnState, err, why error) error {
	switch {
	case a.exitedNow():
		a.host.forget(a)
		go a.stop("it exited")
		ts.finish(ctx, wire.ToolFailed, "the agent exited before it said how the call ended")
		return fmt.Errorf("%w mid-turn%s", errAgentExited, a.lastWords())
	case a.gone(): // the connection closed on a live process
		a.host.forget(a)
		go a.stop("its connection closed")
		ts.finish(ctx, wire.ToolFailed, "the connection to the agent closed before it said how the call ended")
		return errors.New("the connection to the agent closed: it sent more at once than the daemon takes (a line over 10 MiB, or over a thousand updates waiting), and was stopped")
	}
	ts.finish(ctx, wire.ToolFailed, "the agent's turn failed before it said how the call ended")
	if why != nil {
		return why
	}
	return fmt.Errorf("the agent's turn failed: %s", errText(err))
}

// ended ends a prompt the agent answered: its stop reason is the turn's
// end (why, what cancelled it, wins over the agent's words).
func (ts *turnState) ended(ctx context.Context, stop acp.StopReason, why error) error {
	switch stop {
	case acp.StopReasonEndTurn:
		ts.finish(ctx, wire.ToolCompleted, "")
		return why // nil, or it finished as it was cancelled: the turn ends as asked
	case acp.StopReasonCancelled:
		ts.finish(ctx, wire.ToolCancelled, "the turn was interrupted")
		if why != nil {
			return why
		}
		return errors.New("the agent cancelled its turn")
	case acp.StopReasonRefusal:
		ts.finish(ctx, wire.ToolFailed, "the agent refused to go on")
		return errors.New("the agent refused to go on (stopReason refusal)")
	case acp.StopReasonMaxTokens:
		ts.finish(ctx, wire.ToolFailed, "the agent's model reached its token limit")
		return errors.New("the agent's model reached its token limit (stopReason max_tokens)")
	case acp.StopReasonMaxTurnRequests:
		ts.finish(ctx, wire.ToolFailed, "the agent reached its limit of requests in one turn")
		return errors.New("the agent reached its limit of model requests in one turn (stopReason max_turn_requests)")
	}
	ts.finish(ctx, wire.ToolFailed, "the agent ended its turn in a way albedo does not know")
	return fmt.Errorf("the agent ended its turn with stopReason %q, which albedo does not know", wire.CutUTF8(string(stop), 64))
}

// cancelGrace is how long an interrupted agent has to end its prompt
// after session/cancel before it is stopped.
const cancelGrace = 10 * time.Second

// usageOf is the agent's usage report as the log keeps it.
func usageOf(u acp.Usage) wire.Usage {
	w := wire.Usage{InputTokens: int64(u.InputTokens), OutputTokens: int64(u.OutputTokens)}
	if u.CachedReadTokens != nil {
		c := int64(*u.CachedReadTokens)
		w.CachedTokens = &c
	}
	if u.ThoughtTokens != nil {
		r := int64(*u.ThoughtTokens)
		w.ReasoningTokens = &r
	}
	return w
}

// transcriptText tells an agent that starts anew the conversation so
// far, before its prompt, bounded (maxTranscriptBytes: the newest
// messages).
func transcriptText(msgs []provider.Message) string {
	var parts []string
	size := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Text == "" || m.Role == provider.RoleTool || m.Role == wire.RoleSystem {
			continue
		}
		who := m.Author
		if who == "" {
			who = string(m.Role)
		}
		p := who + ": " + m.Text
		if size+len(p) > maxTranscriptBytes {
			parts = append(parts, "[earlier messages left out]")
			break
		}
		size += len(p)
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("[albedo: you start this conversation anew; what was said before, oldest first:]\n\n")
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString(parts[i])
		b.WriteString("\n\n")
	}
	b.WriteString("[albedo: the new message follows.]\n\n")
	return b.String()
}

// maxTranscriptBytes bounds the transcript an agent started anew is told.
const maxTranscriptBytes = 256 << 10
