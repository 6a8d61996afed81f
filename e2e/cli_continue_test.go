//go:build !e2e_only || e2e_core

package e2e

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// albedo continue runs on a reply an interrupt cut off and prints the
// rest; with nothing left to continue it says so and fails.
func TestCLIContinuesACutOffReply(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Title: "story", Provider: "fake"}})
	block := make(chan struct{})
	defer close(block)
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"Once upon "}, Block: block}, fakeopenai.Reply{Chunks: []string{"a time, the end."}})
	st := fx.c.Stream(client.StreamOptions{})
	defer st.Close()
	sub := st.Subscribe("s", client.Cursor{})
	r, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "tell a story")
	if err != nil {
		t.Fatal(err)
	}
	for {
		it, err := sub.Next(fx.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if (it.Op == wire.PushDelta || it.Op == wire.PushPartial) && it.Text.TurnID == r.TurnID && it.Text.Text != "" {
			break
		}
	}
	if _, err := fx.c.Interrupt(fx.ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if out := cli(t, fx.home, "continue", "story"); strings.TrimSpace(out) != "a time, the end." {
		t.Fatalf("albedo continue printed %q", out)
	}
	if _, stderr, code := cliRun(t, fx.home, "", "continue", "story"); code == 0 || !strings.Contains(stderr, "nothing to continue") {
		t.Fatalf("continue a whole reply: exit %d, %s", code, stderr)
	}
}
