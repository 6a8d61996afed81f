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
	pctx, pcancel := context.WithCancel(context.Background())
	defer pcancel()
	type answer struct {
		res acp.PromptResponse
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := a.conn.Prompt(pctx, acp.PromptRequest{SessionId: a.sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
		done <- answer{res, err}
	}()
	var why error // what cancelled the prompt: an interrupt, or too many calls
	var ans answer
	select {
	case ans = <-done:
	case <-ctx.Done():
		why = context.Cause(ctx)
	case <-ts.over:
		why = fmt.Errorf("the agent made more than %d tool calls in one turn (max_tool_calls); the turn was cancelled there", a.cfg.MaxCalls)
	}
	if why != nil {
		// session/cancel; the agent answers the prompt with stopReason
		// cancelled once it has stopped.
		_ = a.conn.Cancel(context.Background(), acp.CancelNotification{SessionId: a.sid})
		select {
		case ans = <-done:
		case <-time.After(cancelGrace):
			pcancel()
			a.host.forget(a)
			a.stop("it did not stop within " + cancelGrace.String() + " of session/cancel")
			ans = <-done
		}
	}
	bg := context.WithoutCancel(ctx)
	a.terminals.killAll() // a command outlives no turn: its result lands before the turn's end
	if ans.err != nil {
		if a.exitedNow() {
			a.host.forget(a)
			go a.stop("it exited")
			ts.finish(bg, wire.ToolFailed, "the agent exited before it said how the call ended")
			return fmt.Errorf("%w mid-turn%s", errAgentExited, a.lastWords())
		}
		if a.gone() { // the connection closed on a live process
			a.host.forget(a)
			go a.stop("its connection closed")
			ts.finish(bg, wire.ToolFailed, "the connection to the agent closed before it said how the call ended")
			return errors.New("the connection to the agent closed: it sent more at once than the daemon takes (a line over 10 MiB, or over a thousand updates waiting), and was stopped")
		}
		ts.finish(bg, wire.ToolFailed, "the agent's turn failed before it said how the call ended")
		if why != nil {
			return why
		}
		return fmt.Errorf("the agent's turn failed: %s", errText(ans.err))
	}
	if u := ans.res.Usage; u != nil {
		t.Sink.Usage(usageOf(*u))
	}
	switch ans.res.StopReason {
	case acp.StopReasonEndTurn:
		ts.finish(bg, wire.ToolCompleted, "")
		if why != nil {
			return why // it finished as it was cancelled: the turn ends as asked
		}
		return nil
	case acp.StopReasonCancelled:
		ts.finish(bg, wire.ToolCancelled, "the turn was interrupted")
		if why != nil {
			return why
		}
		return errors.New("the agent cancelled its turn")
	case acp.StopReasonRefusal:
		ts.finish(bg, wire.ToolFailed, "the agent refused to go on")
		return errors.New("the agent refused to go on (stopReason refusal)")
	case acp.StopReasonMaxTokens:
		ts.finish(bg, wire.ToolFailed, "the agent's model reached its token limit")
		return errors.New("the agent's model reached its token limit (stopReason max_tokens)")
	case acp.StopReasonMaxTurnRequests:
		ts.finish(bg, wire.ToolFailed, "the agent reached its limit of requests in one turn")
		return errors.New("the agent reached its limit of model requests in one turn (stopReason max_turn_requests)")
	}
	ts.finish(bg, wire.ToolFailed, "the agent ended its turn in a way albedo does not know")
	return fmt.Errorf("the agent ended its turn with stopReason %q, which albedo does not know", cut(string(ans.res.StopReason), 64))
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
