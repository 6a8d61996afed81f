//go:build !e2e_only || e2e_term

package e2e

import (
	"strings"
	"testing"
	"time"

	"albedo/wire"
)

// Two quick Escs and then a command, in a real terminal: tmux sends ESC
// ESC / at once, which tcell reads as Alt-/. The slash is not lost: Enter
// runs "/new fake", which makes a session of provider fake, and nothing
// is posted as a message in the session that was open.
func TestTerminalEscEscThenACommand(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "here"})
	x := startTmux(t, fx.home, 100, 30)
	x.waitPane("the session, connected", func(s string) bool {
		return strings.Contains(s, " connected") && strings.Contains(s, "message · /help")
	})
	x.keys("Escape", "Escape", "/")
	x.keys("-l", "new fake")
	x.keys("Enter")

	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, ev := range pageOf(t, fx, "here") {
			if ev.Type == wire.EventMessage {
				t.Fatalf("posted in the open session as a message: %q\n%s", ev.Text, x.capture())
			}
		}
		ss, err := fx.c.Sessions(fx.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ss) == 2 {
			for _, s := range ss {
				if s.ID != "here" && s.Provider != "fake" {
					t.Fatalf("/new fake made a session of provider %q", s.Provider)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/new fake made no session:\n%s", x.capture())
		}
		time.Sleep(50 * time.Millisecond)
	}
	x.keys("C-q")
}

// pageOf is the events of a session's first page.
func pageOf(t *testing.T, fx *fixture, session string) []wire.Event {
	t.Helper()
	p, err := fx.c.History(fx.ctx, session, 0, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	return p.Events
}
