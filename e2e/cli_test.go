//go:build !e2e_only || e2e_core

package e2e

import (
	"bufio"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// albedo send prints the reply and exits 0; a failed turn exits 5 with the
// provider's error; albedo tail --json prints push frames as received.
func TestCLISendAndTail(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, cli: true})
	home := fx.home
	id := strings.TrimSpace(lastLine(cli(t, home, "sessions", "new", "--title", "cli", "--provider", "fake")))
	if out := cli(t, home, "send", id, "hello there"); strings.TrimSpace(out) != "fake: hello there" {
		t.Fatalf("send printed %q", out)
	}
	fx.fake.Push(fakeopenai.Reply{Status: 500, Message: "model crashed"})
	out, err := exec.Command(albedoBin, "--home", home, "send", id, "again").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 5 || !strings.Contains(string(out), "model crashed") {
		t.Fatalf("failed turn: exit %v, output %q", err, out)
	}

	tail := exec.Command(albedoBin, "--home", home, "tail", id, "--after", "0", "--json")
	stdout, err := tail.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { tail.Process.Kill(); tail.Wait() }()
	// Should the output stop short, end the tail instead of hanging.
	watchdog := time.AfterFunc(30*time.Second, func() { tail.Process.Kill() })
	defer watchdog.Stop()
	// The log: 4 events of the first turn; the failed one is the user
	// message, turn started and turn failed (no text, so no reply message).
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	var offsets []int64
	for len(offsets) < 7 && sc.Scan() {
		var fr wire.Frame
		if err := json.Unmarshal(sc.Bytes(), &fr); err != nil {
			t.Fatalf("tail printed %q: %v", sc.Text(), err)
		}
		if fr.Op == wire.PushEvent {
			offsets = append(offsets, fr.Event.Offset)
		}
	}
	for i, o := range offsets {
		if o != int64(i+1) {
			t.Fatalf("tail offsets %v", offsets)
		}
	}
	if len(offsets) != 7 {
		t.Fatalf("tail printed %d events", len(offsets))
	}
}

// What the daemon refuses of a command's arguments is a usage error,
// exit status 2, as docs/cli.md's table says: a provider it does not
// have, an effort it does not know.
func TestCLIRefusedArgumentsAreUsageErrors(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{})
	for _, args := range [][]string{
		{"sessions", "new", "--provider", "nosuchprov"},
		{"sessions", "new", "--effort", "bogus"},
	} {
		out, err := exec.Command(albedoBin, append([]string{"--home", fx.home}, args...)...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("albedo %s: %v, want exit status 2\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// albedo sessions ls lists as albedo sessions does, as bots ls and
// members ls list theirs.
func TestCLISessionsLs(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "listed"})
	list, ls := cli(t, fx.home, "sessions"), cli(t, fx.home, "sessions", "ls")
	if list != ls || !strings.Contains(ls, "listed") {
		t.Fatalf("albedo sessions:\n%s\nalbedo sessions ls:\n%s", list, ls)
	}
}
