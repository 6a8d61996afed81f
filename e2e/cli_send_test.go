//go:build !e2e_only || e2e_core

package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"albedo/client"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// sendProc is `albedo send` running in the background, its stderr read
// line by line as it comes.
type sendProc struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	lines  chan string // stderr, closed at its end
	done   chan struct{}
	code   int
	errs   []string // every stderr line, once done
}

func startSend(t *testing.T, home string, args ...string) *sendProc {
	t.Helper()
	p := &sendProc{lines: make(chan string, 64), done: make(chan struct{})}
	p.cmd = exec.Command(albedoBin, append([]string{"--home", home, "send"}, args...)...)
	p.cmd.Stdout = &p.stdout
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.errs = append(p.errs, sc.Text())
			p.lines <- sc.Text()
		}
		close(p.lines)
		io.Copy(io.Discard, stderr)
		err := p.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
		}
		close(p.done)
	}()
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.done })
	return p
}

// waitLine reads stderr until a line holds want.
func (p *sendProc) waitLine(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				<-p.done
				t.Fatalf("send ended (exit %d) without saying %q: %q", p.code, want, p.errs)
			}
			if strings.Contains(l, want) {
				return
			}
		case <-deadline:
			t.Fatalf("send did not say %q within 30s", want)
		}
	}
}

// wait waits for the process to end and returns its stderr.
func (p *sendProc) wait(t *testing.T) string {
	t.Helper()
	for range p.lines {
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("send did not end within 30s")
	}
	return strings.Join(p.errs, "\n")
}

// send to a bot:NAME session that no bot serves says, once and at once,
// that it waits for that bot; Ctrl-C and --timeout end it with exit 7 and
// a message that the input stays queued, not "context canceled".
func TestCLISendWaitingForBot(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{cli: true})
	home := fx.home
	cli(t, home, "bots", "add", "helper") // and no bot connects
	id := strings.TrimSpace(lastLine(cli(t, home, "sessions", "new", "--title", "helped", "--provider", "bot:helper")))

	p := startSend(t, home, "helped", "anyone", "there?")
	p.waitLine(t, "waiting for bot helper to connect")
	p.cmd.Process.Signal(syscall.SIGINT)
	stderr := p.wait(t)
	if p.code != 7 || !strings.Contains(stderr, "bot helper has not connected; the input stays queued") ||
		strings.Contains(stderr, "context canceled") || strings.Count(stderr, "waiting for bot helper") != 1 {
		t.Fatalf("after Ctrl-C: exit %d, stderr:\n%s", p.code, stderr)
	}
	if st, err := fx.c.Status(fx.ctx, id); err != nil || st.Phase != wire.PhaseWaiting {
		t.Fatalf("the input did not stay queued: %+v, %v", st, err)
	}

	p = startSend(t, home, "helped", "again", "--timeout", "300ms")
	stderr = p.wait(t)
	if p.code != 7 || !strings.Contains(stderr, "no reply within 300ms: bot helper has not connected") {
		t.Fatalf("after --timeout: exit %d, stderr:\n%s", p.code, stderr)
	}
}

// A turn interrupted while send waits exits 6 and prints what streamed
// before, once: with stdout not a terminal the deltas are not printed, only
// the committed text.
func TestCLISendInterrupted(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, cli: true})
	home := fx.home
	id := strings.TrimSpace(lastLine(cli(t, home, "sessions", "new", "--provider", "fake")))
	block := make(chan struct{})
	defer close(block)
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"streamed ", "so far"}, Block: block})

	// Watch the session: the interrupt goes once the deltas have reached
	// the daemon, so that they are in what it commits.
	st := fx.c.Stream(client.StreamOptions{})
	defer st.Close()
	sub := st.Subscribe(id, client.Cursor{})
	p := startSend(t, home, client.ShortID(id), "go")
	var text string
	for text != "streamed so far" {
		it, err := sub.Next(fx.ctx)
		if err != nil {
			t.Fatal(err)
		}
		switch it.Op {
		case wire.PushPartial:
			text = it.Text.Text
		case wire.PushDelta:
			text += it.Text.Text
		}
	}
	if _, err := fx.c.Interrupt(fx.ctx, id); err != nil {
		t.Fatal(err)
	}
	stderr := p.wait(t)
	if p.code != 6 || p.stdout.String() != "streamed so far\n" || !strings.Contains(stderr, "the turn was interrupted (user)") {
		t.Fatalf("exit %d, stdout %q, stderr %q", p.code, p.stdout.String(), stderr)
	}
}
