//go:build !e2e_only || e2e_term

package e2e

import (
	"strings"
	"testing"
	"time"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// The terminal decides a tool call, in a real terminal: the owner asks a
// model that calls the example bot's word_count; the pane shows what the
// model said, the call waiting with its arguments, the sidebar's mark
// and the decision bar. A second terminal, opened while the call waits,
// finds it in the history it loads and shows the bar too; Alt-Y there
// (ESC y, as tmux sends it) allows it. Both panes then show who allowed
// it, the tool's output and the model's reply, and neither has the bar.
// The daemon recorded the owner's decision.
func TestTerminalDecidesAToolCall(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	f := withFake(t, home)
	startDaemon(t, home)
	c := newClient(t, home)
	ctx := ctxT(t)
	token := strings.TrimSpace(lastLine(cli(t, home, "bots", "add", "example")))
	startBot(t, home, token, time.Millisecond)
	if _, err := c.CreateSession(ctx, "k", wire.SessionCreate{Title: "counting", Provider: "fake"}); err != nil {
		t.Fatal(err)
	}
	waitTool(t, ctx, c, "k", "bot:example/word_count")
	f.Push(fakeopenai.Reply{Chunks: []string{"Let me count them."}, ToolCalls: []fakeopenai.ToolCall{
		{ID: "call_1", Name: "bot__example__word_count", Arguments: `{"text":"one two three"}`}}},
		fakeopenai.Reply{Chunks: []string{"There are three words."}})

	x := startTmux(t, home, 120, 40)
	x.waitPane("the session, connected", func(s string) bool {
		return strings.Contains(s, " connected") && strings.Contains(s, "counting") && strings.Contains(s, "message · /help")
	})
	x.keys("-l", "how many words?")
	x.keys("Enter")
	// The call comes as an event, the phase with the status after it: the
	// pane shows them in two frames.
	x.waitPane("the call waiting for a decision, the keys, the sidebar's mark, the status bar", func(s string) bool {
		for _, want := range []string{"Let me count them.", "⚙ bot:example/word_count · waiting for a decision",
			`{"text":"one two three"}`, "⚠ bot:example/word_count waits for your decision",
			"Alt-Y allow · Alt-A allow for this session · Alt-N deny", "? counting"} {
			if !strings.Contains(s, want) {
				return false
			}
		}
		rows := strings.Split(strings.TrimRight(s, "\n"), "\n")
		return strings.Contains(rows[len(rows)-1], "waiting for a decision") // the status bar
	})

	y := startTmux(t, home, 120, 40)
	y.waitPane("the call waiting, in the history of a second terminal", has("Alt-Y allow · Alt-A allow for this session · Alt-N deny"))
	y.keys("M-y")
	done := func(s string) bool {
		return strings.Contains(s, "⚙ bot:example/word_count · completed") && strings.Contains(s, "✓ allowed by ") &&
			strings.Contains(s, "│ 3 words") && strings.Contains(s, "There are three words.") &&
			!strings.Contains(s, "Alt-Y allow") && !strings.Contains(s, "waits for your decision")
	}
	y.waitPane("the call completed, allowed, and the reply", done)
	pane := x.waitPane("the first terminal: the call completed, allowed, and the reply", done)
	if n := strings.Count(pane, "⚙ bot:example/word_count"); n != 1 {
		t.Fatalf("the call shows %d times:\n%s", n, pane)
	}

	var decided *wire.Event
	for _, ev := range events(t, ctx, c, "k") {
		if ev.Type == wire.EventApproval {
			decided = &ev
		}
	}
	if decided == nil || decided.Decision != wire.DecisionAllow || decided.Author == "" {
		t.Fatalf("the daemon's approval: %+v", decided)
	}
	if !strings.Contains(pane, "✓ allowed by "+decided.Author) {
		t.Fatalf("the pane does not name %q as who allowed it:\n%s", decided.Author, pane)
	}
	x.keys("C-q")
	y.keys("C-q")
}
