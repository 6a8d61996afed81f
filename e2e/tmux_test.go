package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// tmux drives a real terminal: the albedo binary (with no arguments, or
// those given), in a tmux pane of its own private tmux server.
type tmux struct {
	t      *testing.T
	socket string
}

func startTmux(t *testing.T, home string, w, h int, args ...string) *tmux {
	t.Helper()
	return startTmuxEnv(t, "ALBEDO_HOME="+home, w, h, args...)
}

// startTmuxEnv is startTmux with the environment given as the shell's
// assignments (e.g. "ALBEDO_HOME=… ALBEDO_URL=…"). TERM is xterm-256color
// unless env sets it.
func startTmuxEnv(t *testing.T, env string, w, h int, args ...string) *tmux {
	t.Helper()
	skipShort(t, "tmux")
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is required for this test: apt-get install tmux (.ci/run installs it)")
	}
	x := &tmux{t: t, socket: tmuxSocket()}
	cmd := fmt.Sprintf("TERM=xterm-256color %s %s", env, albedoBin)
	for _, a := range args {
		cmd += " '" + a + "'"
	}
	x.run("new-session", "-d", "-s", "albedo", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), cmd)
	t.Cleanup(func() { exec.Command("tmux", "-L", x.socket, "kill-server").Run() })
	return x
}

// tmuxSockets counts the tmux servers this process has started, and
// tmuxEpoch tells this process from an earlier one that had its pid.
var (
	tmuxSockets atomic.Int64
	tmuxEpoch   = time.Now().UnixNano()
)

// tmuxSocket names a new private tmux server: this process's, and one of
// its own among those of the tests running at once (a name made of the
// time alone could be two tests' if they asked in the same instant).
func tmuxSocket() string {
	return fmt.Sprintf("albedo-e2e-%d-%d-%d", os.Getpid(), tmuxEpoch, tmuxSockets.Add(1))
}

func (x *tmux) run(args ...string) string {
	x.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", x.socket}, args...)...).CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// runQuiet is run for a command that may fail meanwhile (show-buffer
// before there is a buffer): its output, or "" when it failed.
func (x *tmux) runQuiet(args ...string) string {
	out, err := exec.Command("tmux", append([]string{"-L", x.socket}, args...)...).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

func (x *tmux) capture() string { return x.run("capture-pane", "-p", "-t", "albedo") }

// waitPane observes the pane until ok holds. tmux has no change
// notification, so this looks every 50 ms, within a deadline.
func (x *tmux) waitPane(what string, ok func(string) bool) string {
	x.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := x.capture()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("the pane never showed %s:\n%s", what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (x *tmux) keys(keys ...string) { x.run(append([]string{"send-keys", "-t", "albedo"}, keys...)...) }

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
