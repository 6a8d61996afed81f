//go:build !e2e_only || e2e_term

package e2e

import (
	"strings"
	"testing"

	"albedo/wire"
)

// A message's versions in a real terminal. A reply regenerated (Ctrl-Y,
// r) shows ‹ 2/2 › in the fork, and ← there opens the original at that
// reply, ‹ 1/2 ›; a question edited there (↑, e) shows ‹ 2/2 › in its
// fork; on it, ← opens the original at the question and → the edit
// again. Only the message after each fork point has the mark.
func TestTerminalSwitchesVersions(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "plan", create: wire.SessionCreate{Title: "plan"}})
	putInput(t, fx, "plan", "first question")
	waitTurnsClosed(t, fx.ctx, fx.c, "plan", 1)
	putInput(t, fx, "plan", "second question")
	waitTurnsClosed(t, fx.ctx, fx.c, "plan", 2)
	x := startTmux(t, fx.home, 140, 40)
	x.waitPane("the session", has("echo: second question"))
	inFork := func(s string) bool { return strings.Contains(s, "← plan #") }

	x.keys("C-y")
	x.keys("r")
	x.waitPane("the regenerated reply, its second version", func(s string) bool {
		return inFork(s) && strings.Count(s, "‹ 2/2 ›") == 1 && strings.Count(s, "echo: second question") == 1
	})
	x.keys("C-y")
	x.waitPane("its keys", has("←→ version 2/2"))
	x.keys("Left")
	pane := x.waitPane("the original, at the reply", func(s string) bool {
		return !inFork(s) && strings.Contains(s, "←→ version 1/2")
	})
	if strings.Count(pane, "‹ 1/2 ›") != 1 {
		t.Fatalf("the original's marks:\n%s", pane)
	}

	x.keys("Up")
	x.keys("e")
	x.waitPane("the edit's fork", func(s string) bool { return inFork(s) && strings.Contains(s, "❯ second question") })
	x.keys("-l", ", edited")
	x.keys("Enter")
	x.waitPane("the edited question, its second version", func(s string) bool {
		return inFork(s) && strings.Contains(s, "echo: second question, edited") && strings.Count(s, "‹ 2/2 ›") == 1
	})
	x.keys("C-y")
	x.keys("Up")
	x.waitPane("the edited question selected", has("←→ version 2/2"))
	x.keys("Left")
	pane = x.waitPane("the original, at the question", func(s string) bool {
		return !inFork(s) && strings.Contains(s, "←→ version 1/2") && strings.Count(s, "‹ 1/2 ›") == 2
	})
	if strings.Contains(pane, "edited") {
		t.Fatalf("the original shows the edit:\n%s", pane)
	}
	x.keys("Right")
	x.waitPane("the edit again", func(s string) bool {
		return inFork(s) && strings.Contains(s, "←→ version 2/2") && strings.Contains(s, "second question, edited")
	})
	x.keys("Escape")
	x.keys("C-q")
}
