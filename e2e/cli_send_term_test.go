//go:build !e2e_only || e2e_term

package e2e

import (
	"strings"
	"sync"
	"testing"

	"albedo/client"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// On a terminal, send and tail show a reply as it streams, before it is
// committed, and then once; sessions rm asks there and deletes on "y".
func TestCLIStreamsToATerminal(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true})
	home := fx.home
	s, err := fx.c.NewSession(fx.ctx, wire.SessionCreate{Provider: "fake", Title: "streamy"})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	block := make(chan struct{})
	release := func() { once.Do(func() { close(block) }) }
	defer release()
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"streamed ", "so far"}, Block: block})

	x := startTmuxCmd(t, 80, 20, shown(home, "send", "streamy", "question"))
	pane := x.waitPane("the reply streaming", has("streamed so far"))
	if strings.Contains(pane, "[exit") {
		t.Fatalf("send ended before the reply was committed:\n%s", pane)
	}
	// A tail opened now gets the reply so far, and streams it too.
	tail := startTmuxCmd(t, 80, 20, shown(home, "tail", client.ShortID(s.ID)))
	tail.waitPane("tail streaming", has("assistant: streamed so far"))

	release()
	pane = x.waitPane("send's end", has("[exit 0]"))
	if n := strings.Count(pane, "streamed so far"); n != 1 {
		t.Fatalf("send showed the reply %d times:\n%s", n, pane)
	}
	// An event after the reply shows that tail has printed the commit.
	putInput(t, fx, s.ID, "next")
	me := homeMember(t, fx)
	pane = tail.waitPane("the next event", has("#5 user "+me+": next"))
	if !strings.Contains(pane, "#1 user "+me+": question\nassistant: streamed so far\n") || strings.Count(pane, "streamed so far") != 1 {
		t.Fatalf("tail:\n%s", pane)
	}
	rm := startTmuxCmd(t, 120, 10, shown(home, "sessions", "rm", "streamy"))
	rm.waitPane("the question", has("[y/N]"))
	rm.keys("y", "Enter")
	rm.waitPane("the deletion", has("[exit 0]"))
	if _, err := fx.c.Session(fx.ctx, s.ID); client.Code(err) != wire.CodeNotFound {
		t.Fatalf("after y: %v", err)
	}
}
