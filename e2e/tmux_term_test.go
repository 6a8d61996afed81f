//go:build !e2e_only || e2e_term

package e2e

import (
	"strings"
	"testing"
)

// The terminal client in a real terminal: type a prompt and see the echo,
// restart the daemon from outside, type another, and the pane shows both
// replies once each and a status bar back to "connected".
func TestTerminalInTmux(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	stopOnCleanup(t, home)
	x := startTmux(t, home, 100, 30)
	x.waitPane("a connected status bar", has(" connected"))
	x.keys("C-n")
	x.waitPane("the composer of a new session", has("message · /help"))
	x.keys("first prompt", "Enter")
	x.waitPane("the first reply", has("echo: first prompt"))

	cli(t, home, "stop")
	cli(t, home, "status") // starts the next daemon

	x.keys("second prompt", "Enter")
	pane := x.waitPane("the second reply", has("echo: second prompt"))
	pane = x.waitPane("a connected status bar", func(s string) bool {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		return strings.HasPrefix(lines[len(lines)-1], " connected")
	})
	for _, reply := range []string{"echo: first prompt", "echo: second prompt"} {
		if n := strings.Count(pane, reply); n != 1 {
			t.Fatalf("%q shown %d times:\n%s", reply, n, pane)
		}
	}
	x.keys("C-q")
}

// On a fresh home the first message typed starts a conversation: Enter
// with no session open makes one and sends the message in it, as every
// chat does; nothing typed is thrown away.
func TestTerminalFirstMessageStartsASession(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	stopOnCleanup(t, home)
	x := startTmux(t, home, 100, 30)
	x.waitPane("a connected status bar", has(" connected"))
	x.keys("-l", "my very first words")
	x.keys("Enter")
	pane := x.waitPane("the first reply", has("echo: my very first words"))
	if strings.Contains(pane, "no session") {
		t.Fatalf("the terminal refused the first message:\n%s", pane)
	}
	sessions := cli(t, home, "sessions")
	if strings.Count(sessions, "\n") != 2 { // the header and the one made
		t.Fatalf("albedo sessions:\n%s", sessions)
	}
	x.keys("C-q")
}
