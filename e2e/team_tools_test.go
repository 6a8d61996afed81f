//go:build !e2e_only || (e2e_web && e2e_term)

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// A team decides a tool call together, each from their own client: the
// owner watches in the terminal (tmux) and a member granted write
// decides on the page (Chromium, at a phone's 360 px). The fake model
// calls the example bot's word_count; the call asks; the owner's pane
// shows it waiting with the decision bar; the member taps Allow; the
// bot runs the tool, the model gets its result and answers. The owner's
// pane then shows the call allowed by the member, its output and the
// reply, with no bar left; the page shows the same; the log holds the
// member's decision.
func TestTeamDecidesAToolCallOnThePageWhileTheOwnerWatchesInTheTerminal(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "k", create: wire.SessionCreate{Title: "counting", Provider: "fake"}})
	token := strings.TrimSpace(lastLine(cli(t, fx.home, "bots", "add", "example")))
	startBot(t, fx.home, token, time.Millisecond)
	waitTool(t, fx.ctx, fx.c, "k", "bot:example/word_count")
	_, annLink := writer(t, fx.home, "ann", "k")

	x := startTmux(t, fx.home, 120, 40)
	x.waitPane("the owner's terminal, connected", func(s string) bool {
		return strings.Contains(s, " connected") && strings.Contains(s, "counting")
	})
	b := startBrowser(t)
	ann := b.tab()
	ann.do(chromedp.EmulateViewport(360, 740))
	ann.navigate(annLink)
	ann.waitOpen("counting")

	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"Counting."}, ToolCalls: []fakeopenai.ToolCall{
		{ID: "call_1", Name: "bot__example__word_count", Arguments: `{"text":"one two three"}`}}},
		fakeopenai.Reply{Chunks: []string{"Three words."}})
	if _, err := fx.c.PutInput(fx.ctx, "k", uuid.Must(uuid.NewV7()).String(), "@fake how many words?"); err != nil { // a team's session answers mentions
		t.Fatal(err)
	}
	x.waitPane("the call waiting for a decision, with the keys", func(s string) bool {
		return strings.Contains(s, "⚙ bot:example/word_count · waiting for a decision") &&
			strings.Contains(s, "Alt-Y allow · Alt-A allow for this session · Alt-N deny")
	})
	ann.wait("the waiting call, with its buttons", toolBlock("pending")+` && `+decisionButtons+` === 3`)
	ann.click(`.tool[data-state=pending] .tool-decide button[data-decision=allow]`)

	pane := x.waitPane("the owner's terminal: allowed by ann, the output and the reply", func(s string) bool {
		return strings.Contains(s, "⚙ bot:example/word_count · completed") && strings.Contains(s, "✓ allowed by ann") &&
			strings.Contains(s, "│ 3 words") && strings.Contains(s, "Three words.") && !strings.Contains(s, "Alt-Y allow")
	})
	if n := strings.Count(pane, "⚙ bot:example/word_count"); n != 1 {
		t.Fatalf("the call shows %d times:\n%s", n, pane)
	}
	ann.wait("the page: allowed by ann, the output and the reply", toolBlock("completed")+` && `+decisionButtons+` === 0 &&
		document.querySelector('.tool .tool-who').textContent === 'allowed by ann' &&
		document.querySelector('.tool details.result pre').textContent === '3 words' && `+shownCommitted("Three words."))
	wantMessages(t, fx, "k", ann.messages())

	var approval wire.Event
	for _, ev := range events(t, fx.ctx, fx.c, "k") {
		if ev.Type == wire.EventApproval {
			approval = ev
		}
	}
	if approval.Decision != wire.DecisionAllow || approval.Author != "ann" {
		t.Fatalf("the approval %+v", approval)
	}
	if ex := ann.exceptions(); len(ex) > 0 {
		t.Fatalf("the page threw: %v", ex)
	}
	x.keys("C-q")
}
