//go:build !e2e_only || e2e_term

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The composer in a real terminal, with the key sequences tmux really
// sends: "line one", Alt-Enter (ESC CR), "line two", Ctrl-J, "line three",
// Enter is one message of three lines; then a 200-line paste with tabs
// (tmux's bracketed paste) and Enter is one message holding every
// character. Both are read back from the daemon.
func TestComposerInTmux(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	stopOnCleanup(t, home)
	x := startTmux(t, home, 120, 35)
	x.waitPane("a connected status bar", has(" connected"))
	x.keys("C-n")
	x.waitPane("the composer of a new session", has("message · /help"))

	x.keys("-l", "line one")
	x.keys("M-Enter")
	x.keys("-l", "line two")
	x.keys("C-j")
	x.keys("-l", "line three")
	x.keys("Enter")
	x.waitPane("the first reply", has("echo: line one"))

	var lines []string
	for i := range 200 {
		lines = append(lines, fmt.Sprintf("%s%03d\tcol\t%s", strings.Repeat("\t", i%3), i, strings.Repeat("x", i%50)))
	}
	paste := strings.Join(lines, "\n")
	buf := filepath.Join(t.TempDir(), "paste.txt")
	if err := os.WriteFile(buf, []byte(paste), 0o600); err != nil {
		t.Fatal(err)
	}
	x.run("load-buffer", "-b", "p", buf)
	x.run("paste-buffer", "-p", "-b", "p", "-t", "albedo")
	x.waitPane("the paste folded in the composer", has("❯ [pasted 200 lines · Ctrl-O shows]"))
	x.keys("C-o")
	x.waitPane("the end of the paste, unfolded", has("199 col "+strings.Repeat("x", 49)))
	x.keys("Enter")
	x.waitPane("the composer emptied by sending", has("message · /help"))

	c := newClient(t, home)
	ctx := ctxT(t)
	ss, err := c.Sessions(ctx)
	if err != nil || len(ss) != 1 {
		t.Fatalf("sessions: %v %v", ss, err)
	}
	inputs := waitInputs(t, c, ss[0].ID, 2)
	if len(inputs) != 2 || inputs[0] != "line one\nline two\nline three" {
		t.Fatalf("the daemon stored %d inputs, the first %q", len(inputs), inputs)
	}
	if inputs[1] != paste {
		i := 0
		for i < min(len(paste), len(inputs[1])) && paste[i] == inputs[1][i] {
			i++
		}
		t.Fatalf("the paste was stored as %d bytes, not %d; they differ from byte %d: %q",
			len(inputs[1]), len(paste), i, inputs[1][i:min(i+40, len(inputs[1]))])
	}
	x.keys("C-q")
}
