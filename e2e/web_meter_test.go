//go:build !e2e_only || e2e_web

package e2e

import (
	"testing"

	"github.com/google/uuid"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// The page's meta line shows the session's context fill (the last turn's
// reported tokens against the profile's context_tokens) and its cost so
// far, from the session when it opens and from each turn as it ends.
func TestWebContextMeterAndCost(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	f := withFakeAnd(t, home, "context_tokens = 1000\n[providers.fake.prices]\ninput = 1\noutput = 2\n")
	startDaemon(t, home)
	c := newClient(t, home)
	ctx := ctxT(t)
	if _, err := c.CreateSession(ctx, "m", wire.SessionCreate{Title: "m", Provider: "fake"}); err != nil {
		t.Fatal(err)
	}
	f.Push(fakeopenai.Reply{Chunks: []string{"one"}, Usage: &fakeopenai.Usage{PromptTokens: 100, CompletionTokens: 20}},
		fakeopenai.Reply{Chunks: []string{"two"}, Usage: &fakeopenai.Usage{PromptTokens: 300, CompletionTokens: 50}})
	if _, err := c.PutInput(ctx, "m", uuid.NewString(), "first"); err != nil {
		t.Fatal(err)
	}
	waitTurnsClosed(t, ctx, c, "m", 1)
	b := startBrowser(t)
	p := b.open(ownerLink(t, home, "m"))
	p.waitOpen("m")
	p.wait("the meter from the session", `document.querySelector('#settings').textContent.includes('ctx 120/1.0k (12%) · $0.0001')`)
	if _, err := c.PutInput(ctx, "m", uuid.NewString(), "second"); err != nil {
		t.Fatal(err)
	}
	p.wait("the meter after a turn", `document.querySelector('#settings').textContent.includes('ctx 350/1.0k (35%) · $0.0005')`)
}
