//go:build !e2e_only || e2e_core

package e2e

import (
	"bufio"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"albedo/client"
	"albedo/wire"
)

// Cluster mode from outside: the CLI, the example bot and the terminal
// given ALBEDO_URL and ALBEDO_TOKEN, with ALBEDO_HOME an empty directory
// of their own. They must read no daemon.json there (there is none), start
// no daemon, and leave the directory empty.

// urlEnv is the environment of a process pointed at url with token, its
// home the empty directory home (other ALBEDO_ variables dropped).
func urlEnv(home, url, token string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ALBEDO_") {
			env = append(env, kv)
		}
	}
	return append(env, "ALBEDO_HOME="+home, client.EnvURL+"="+url, client.EnvToken+"="+token)
}

// remoteCLI runs an albedo command with env; it returns the combined
// output and the exit status.
func remoteCLI(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(albedoBin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("albedo %v: %v", args, err)
	return "", 0
}

// mustRemote is remoteCLI that requires success.
func mustRemote(t *testing.T, env []string, args ...string) string {
	t.Helper()
	out, code := remoteCLI(t, env, args...)
	if code != 0 {
		t.Fatalf("albedo %v: exit %d\n%s", args, code, out)
	}
	return out
}

// Every client command against a URL from an empty home: sessions, send,
// tail, export, status, share, open, bots; the example bot serves a turn
// with its token in ALBEDO_TOKEN. stop refuses. Once the daemon is gone a
// command fails at once with the URL in its error, and starts nothing —
// nor does it find the daemon started again on another port, which only
// daemon.json (not read here) would tell.
func TestClusterModeCLIAndBot(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{})
	url, token := daemonURL(t, fx.home)
	other := t.TempDir()
	env := urlEnv(other, url, token)

	id := strings.TrimSpace(lastLine(mustRemote(t, env, "sessions", "new", "--title", "remote")))
	if out := mustRemote(t, env, "send", id, "hello", "there"); strings.TrimSpace(out) != "echo: hello there" {
		t.Fatalf("send printed %q", out)
	}
	if out := mustRemote(t, env, "sessions"); !strings.Contains(out, "remote") {
		t.Fatalf("sessions printed %q", out)
	}
	if out := mustRemote(t, env, "status"); !strings.Contains(out, "server "+url+" (version "+binaryVersion(t)+")") || !strings.Contains(out, "\n1 session\n") {
		t.Fatalf("status printed %q", out)
	}
	if out := mustRemote(t, env, "export", "remote"); !strings.Contains(out, "echo: hello there") {
		t.Fatalf("export printed %q", out)
	}
	share := mustRemote(t, env, "share", "remote")
	if link := lastLine(share); !strings.HasPrefix(link, url+"/#session="+id+"&token=") || !strings.Contains(share, "websocket ws://127.0.0.1:") {
		t.Fatalf("share printed %q", share)
	}
	if link := lastLine(mustRemote(t, env, "open", "--print")); link != url+"/#token="+token {
		t.Fatalf("open --print printed %q", link)
	}
	// A link holds its daemon's address: attach goes there, whatever the URL.
	if out, code := remoteCLI(t, env, "attach", "http://127.0.0.1:1/#session="+id+"&token=x"); code != 1 || !strings.Contains(out, "does not answer at http://127.0.0.1:1") {
		t.Fatalf("attach of a link to nothing: exit %d, %q", code, out)
	}
	out, code := remoteCLI(t, env, "stop")
	if code != 2 || !strings.Contains(out, "ALBEDO_URL") || !strings.Contains(out, "--home") {
		t.Fatalf("stop with a URL: exit %d, %q", code, out)
	}
	if out, code := remoteCLI(t, env, "--url", url, "--home", other, "sessions"); code != 2 || !strings.Contains(out, "exclude") {
		t.Fatalf("--url with --home: exit %d, %q", code, out)
	}
	if out, code := remoteCLI(t, env, "--token", "wrong", "sessions"); code != 1 || !strings.Contains(out, "unauthorized") {
		t.Fatalf("a wrong --token: exit %d, %q", code, out)
	}

	// tail follows from the start, and sees what send adds.
	tail := exec.Command(albedoBin, "tail", id, "--after", "0", "--json")
	tail.Env = env
	stdout, err := tail.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { tail.Process.Kill(); tail.Wait() }()
	mustRemote(t, env, "send", id, "second")
	lines := bufio.NewScanner(stdout)
	for want := int64(1); ; {
		if !lines.Scan() {
			t.Fatalf("tail ended: %v", lines.Err())
		}
		f, err := wire.DecodeFrame(lines.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if f.Op == wire.PushEvent && f.Event.Type == wire.EventMessage {
			if f.Event.Offset < want {
				t.Fatalf("tail: offset %d after %d", f.Event.Offset, want-1)
			}
			want = f.Event.Offset + 1
			if f.Event.Text == "echo: second" {
				break
			}
		}
	}
	tail.Process.Kill()

	// The example bot, from the same empty home, with its token as
	// ALBEDO_TOKEN.
	botToken := strings.TrimSpace(lastLine(mustRemote(t, env, "bots", "add", "example")))
	bot := runBot(t, urlEnv(other, url, botToken), "--pace", "1ms")
	sid := strings.TrimSpace(lastLine(mustRemote(t, env, "sessions", "new", "--provider", "bot:example")))
	if out := mustRemote(t, env, "send", sid, "count", "these", "words"); !strings.Contains(out, "This conversation has 1 message") {
		t.Fatalf("the bot's answer: %q", out)
	}
	if out := mustRemote(t, env, "bots", "ls"); !strings.Contains(out, "example") {
		t.Fatalf("bots ls printed %q", out)
	}
	bot.kill()

	// The daemon dies: a command fails at once, naming the URL, and
	// starts nothing.
	fx.d.kill()
	start := time.Now()
	out, code = remoteCLI(t, env, "sessions")
	if code != 1 || !strings.Contains(out, "daemon_unavailable") || !strings.Contains(out, url) {
		t.Fatalf("with the daemon gone: exit %d, %q", code, out)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("the command took %s to fail", d)
	}
	if _, held := client.LockHolder(fx.home); held {
		t.Fatal("a daemon was started on the server's home")
	}
	// Any process this test or its commands started names one of its two
	// homes (tests running beside it have their own).
	if left := leftoversOf(fx.home, other); len(left) > 0 {
		t.Fatalf("albedo processes run after the daemon was killed: %v", left)
	}
	// Started again on another port, it is not found: the URL is all a
	// client of a URL knows.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := ln.Addr().String()
	ln.Close()
	startDaemon(t, fx.home, "--addr", free)
	if now, _ := daemonURL(t, fx.home); now == url {
		t.Fatalf("the daemon came back on the same port %s", url)
	}
	if out, code := remoteCLI(t, env, "sessions"); code != 1 || !strings.Contains(out, url) {
		t.Fatalf("with the daemon on another port: exit %d, %q", code, out)
	}
	assertEmptyDir(t, other)
}
