//go:build !e2e_only || e2e_term

package e2e

import (
	"strings"
	"testing"

	"albedo/wire"
)

// The model picker in a real terminal. A session that names no model
// shows its profile's default in the status bar, marked; /model lists
// the provider's models above the composer, the default marked; Tab
// chooses one and Enter sets it, which the status bar and the daemon
// then say. On echo, which lists none, the picker says so and a name
// typed is set all the same.
func TestTerminalPicksAModel(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "m", create: wire.SessionCreate{Title: "chat", Provider: "fake"}})
	x := startTmux(t, fx.home, 140, 30)
	x.waitPane("the default model in the status bar", has("│ fake-model (default)"))
	x.keys("-l", "/model")
	x.keys("Enter")
	x.waitPane("the provider's models", func(s string) bool {
		return strings.Contains(s, "fake-large") && strings.Contains(s, "fake-model  (default)") && strings.Contains(s, "❯ /model")
	})
	x.keys("Tab")
	x.waitPane("the first chosen", has("❯ /model fake-large"))
	x.keys("Enter")
	x.waitPane("the model set", func(s string) bool {
		return strings.Contains(s, "│ fake-large ·") && !strings.Contains(s, "(default)")
	})
	if s, err := fx.c.Session(fx.ctx, "m"); err != nil || s.Model != "fake-large" {
		t.Fatalf("the daemon's session: %q %v", s.Model, err)
	}

	x.keys("-l", "/new echo")
	x.keys("Enter")
	x.waitPane("a new echo session, in front", func(s string) bool {
		return len(sidebarRows(s)) == 2 && !strings.Contains(s, "fake-large") && strings.Contains(s, "message · /help")
	})
	x.keys("-l", "/model ")
	x.waitPane("echo lists none", has("the models of echo cannot be listed"))
	x.keys("-l", "mine")
	x.keys("Enter")
	x.waitPane("the name typed, set", has("│ mine ·"))
	x.keys("C-q")
}
