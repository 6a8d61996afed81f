//go:build !e2e_only || e2e_term

package e2e

import (
	"strings"
	"testing"
)

// /copy reaches tmux's clipboard (a paste buffer, with `set-clipboard on`)
// whatever TERM the pane says: tmux's own screen-256color and
// tmux-256color as well as xterm-256color. tcell sent OSC 52 only to
// xterm-like terminals, so under tmux's own TERM the status bar said
// "copied" and nothing was.
func TestCopyInTmux(t *testing.T) {
	// The parent holds no slot of its own: it only waits for its
	// subtests, each of which takes one.
	t.Parallel()
	for _, term := range []string{"screen-256color", "tmux-256color", "xterm-256color"} {
		t.Run(term, func(t *testing.T) {
			parallel(t)
			// A home each: on a home with a session, the composer shows
			// before Ctrl-N's new session takes the focus.
			home := t.TempDir()
			stopOnCleanup(t, home)
			x := startTmuxEnv(t, "ALBEDO_HOME="+home+" TERM="+term, 100, 30)
			x.run("set-option", "-g", "set-clipboard", "on")
			x.waitPane("a connected status bar", has(" connected"))
			x.keys("C-n")
			x.waitPane("the composer of a new session", has("message · /help"))
			word := "copied-under-" + term
			x.keys("-l", word)
			x.keys("Enter")
			x.waitPane("the reply", has("echo: "+word))
			x.keys("-l", "/copy")
			x.keys("Enter")
			x.waitPane("the copy's notice", has("copied"))
			// The buffer is made as tmux reads the sequence, before or
			// with the notice; look until it is there.
			x.waitPane("the reply in tmux's paste buffer", func(string) bool {
				return strings.Contains(x.runQuiet("show-buffer"), "echo: "+word)
			})
			x.keys("C-q")
		})
	}
}
