package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"albedo/wire"

	"github.com/google/uuid"
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

// startTmuxCmd runs shell command cmd in a tmux pane of its own private
// tmux server (startTmux runs the terminal client).
func startTmuxCmd(t *testing.T, w, h int, cmd string) *tmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is required for this test: apt-get install tmux (.ci/run installs it)")
	}
	x := &tmux{t: t, socket: tmuxSocket()}
	x.run("new-session", "-d", "-s", "albedo", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), cmd)
	t.Cleanup(func() { exec.Command("tmux", "-L", x.socket, "kill-server").Run() })
	return x
}

// shown runs an albedo command in a pane and keeps the pane after it ends,
// with its exit status: "[exit N]".
func shown(home string, args ...string) string {
	return fmt.Sprintf("TERM=xterm-256color %s --home %s %s; echo \"[exit $?]\"; exec cat", albedoBin, home, strings.Join(args, " "))
}

// putInput submits text to session as a new input.
func putInput(t *testing.T, fx *fixture, session, text string) wire.Receipt {
	t.Helper()
	r, err := fx.c.PutInput(fx.ctx, session, uuid.Must(uuid.NewV7()).String(), text)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
