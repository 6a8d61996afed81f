//go:build !e2e_only || e2e_term

package e2e

import (
	"strings"
	"testing"
)

// The terminal in a real terminal: after `albedo stop` it says so, with
// nothing after it in the status bar, and starts no daemon; r starts one
// and it connects.
func TestTerminalStopSticksInTmux(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	stopOnCleanup(t, home)
	x := startTmux(t, home, 100, 30)
	x.waitPane("a connected status bar", has(" connected"))
	first := livePID(t, home)
	x.keys("-l", "hello")
	x.keys("Enter")
	x.waitPane("the first reply", has("echo: hello"))

	cli(t, home, "stop")
	pane := x.waitPane("the stopped status bar", has("daemon stopped — r to start"))
	noDaemon(t, home, "the terminal says stopped")
	lines := strings.Split(strings.TrimRight(pane, "\n"), "\n")
	if bar := strings.TrimRight(lines[len(lines)-1], " "); strings.HasSuffix(bar, "│") {
		t.Fatalf("a stray separator ends the status bar: %q", bar)
	}

	x.keys("r")
	x.waitPane("a connected status bar", func(s string) bool {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		return strings.HasPrefix(lines[len(lines)-1], " connected")
	})
	if pid := livePID(t, home); pid == first {
		t.Fatalf("r did not start a new daemon: pid %d", pid)
	}
	x.keys("C-q")
}
