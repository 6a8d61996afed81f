//go:build !e2e_only || e2e_term

package e2e

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"albedo/wire"
)

// A share opens in the terminal with albedo attach: the transcript, live,
// with a read-only badge; what is typed is refused at the first key and
// never piles up in the composer (the daemon stores nothing), and the
// owner's next message arrives.
func TestAttachAShareInTmux(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "shared"}})
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "hello"); err != nil {
		t.Fatal(err)
	}
	out := cli(t, fx.home, "share", "s")
	link := strings.TrimSpace(lastLine(out))
	if !strings.HasPrefix(link, "http://127.0.0.1:") || !strings.Contains(link, "#session=s&token=") {
		t.Fatalf("share printed no link:\n%s", out)
	}
	x := startTmux(t, fx.home, 120, 30, "attach", link)
	x.waitPane("the shared transcript, read-only", func(s string) bool {
		return strings.Contains(s, "echo: hello") && strings.Contains(s, "viewer (read-only)") && strings.Contains(s, "watching: viewer")
	})
	x.keys("-l", "sneaky")
	pane := x.waitPane("the refusal, at the first key", has("read-only: this view"))
	if strings.Contains(pane, "sneaky") {
		t.Fatalf("the read-only composer took the typing:\n%s", pane)
	}
	x.keys("Enter")
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "second"); err != nil {
		t.Fatal(err)
	}
	x.waitPane("the owner's next reply", has("echo: second"))
	if got := waitInputs(t, fx.c, "s", 2); len(got) != 2 || got[0] != "hello" || got[1] != "second" {
		t.Fatalf("the daemon stored %q", got)
	}
	x.keys("C-q")

	// The token alone (share --token) opens the same view, on the
	// home's daemon.
	token := strings.TrimSpace(lastLine(cli(t, fx.home, "share", "s", "--token")))
	y := startTmux(t, fx.home, 120, 30, "attach", token)
	y.waitPane("the transcript, by the token alone", func(s string) bool {
		return strings.Contains(s, "echo: second") && strings.Contains(s, "viewer (read-only)")
	})
	y.keys("C-q")
}
