//go:build !e2e_only || e2e_term

package e2e

import (
	"strings"
	"testing"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// A reply cut off in a real terminal, then continued. Esc interrupts a
// reply midway, and the status bar says /continue runs on it; it does,
// and the rest shows joined to the reply, one reply under one header,
// the marks of the cut gone. A second /continue, with nothing left to
// continue, is refused in words.
func TestTerminalContinuesACutOffReply(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Title: "story", Provider: "fake"}})
	block := make(chan struct{})
	defer close(block)
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"Once upon "}, Block: block}, fakeopenai.Reply{Chunks: []string{"a time, the end."}})
	x := startTmux(t, fx.home, 120, 30)
	x.waitPane("the session", has("message · /help"))
	x.keys("-l", "tell a story")
	x.keys("Enter")
	x.waitPane("the reply streaming", func(s string) bool {
		return strings.Contains(s, "Once upon") && strings.Contains(s, "(Esc interrupts)")
	})
	x.keys("Escape")
	x.waitPane("the reply cut off", func(s string) bool {
		return strings.Contains(s, "[interrupted]") && strings.Contains(s, "⏹ interrupted") && strings.Contains(s, "/continue runs on it")
	})
	x.keys("-l", "/continue")
	x.keys("Enter")
	pane := x.waitPane("the reply whole", has("Once upon a time, the end."))
	if strings.Contains(pane, "[interrupted]") || strings.Contains(pane, "⏹") || strings.Count(pane, "assistant · ") != 1 {
		t.Fatalf("the reply and its rest:\n%s", pane)
	}
	x.keys("-l", "/continue")
	x.keys("Enter")
	x.waitPane("a refusal in words", has("not continued: nothing to continue"))
	x.keys("C-q")
}
