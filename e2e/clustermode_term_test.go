//go:build !e2e_only || e2e_term

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// The terminal in tmux follows a session through ALBEDO_URL while the
// daemon behind it is stopped (on purpose: daemon.down, which a client
// of a home would wait on, does not concern it) and started again on the
// same port: it reconnects by itself, reattaches, and shows every reply
// once.
func TestClusterModeTerminalInTmux(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{})
	url, _ := daemonURL(t, fx.home)
	// A stored token: daemon.json's is new on every boot.
	token := strings.TrimSpace(lastLine(cli(t, fx.home, "members", "add", "remote", "--admin")))
	other := t.TempDir()
	x := startTmuxEnv(t, fmt.Sprintf("ALBEDO_HOME=%s ALBEDO_URL=%s ALBEDO_TOKEN=%s", other, url, token), 100, 30)
	x.waitPane("a connected status bar", has(" connected"))
	x.keys("C-n")
	x.waitPane("the composer of a new session", has("message · /help"))
	x.keys("first prompt", "Enter")
	x.waitPane("the first reply", has("echo: first prompt"))
	ss, err := fx.c.Sessions(fx.ctx)
	if err != nil || len(ss) != 1 {
		t.Fatalf("sessions: %v %v", ss, err)
	}

	fx.d.stop()
	x.waitPane("the terminal reconnecting", has("reconnecting in"))
	port := strings.TrimPrefix(url, "http://127.0.0.1:")
	startDaemon(t, fx.home, "--addr", "127.0.0.1:"+port)
	x.waitPane("a connected status bar", has(" connected"))
	if _, err := fx.c.PutInput(fx.ctx, ss[0].ID, uuid.Must(uuid.NewV7()).String(), "from outside"); err != nil {
		t.Fatal(err)
	}
	x.waitPane("the reply to an input from outside", has("echo: from outside"))
	x.keys("second prompt", "Enter")
	pane := x.waitPane("the second reply", has("echo: second prompt"))
	if strings.Contains(pane, "daemon stopped") {
		t.Fatalf("the terminal took the stop for its own:\n%s", pane)
	}
	for _, reply := range []string{"echo: first prompt", "echo: from outside", "echo: second prompt"} {
		if n := strings.Count(pane, reply); n != 1 {
			t.Fatalf("%q shown %d times:\n%s", reply, n, pane)
		}
	}
	x.keys("C-q")
	assertEmptyDir(t, other)
}
