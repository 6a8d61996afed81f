package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"albedo/client"
	"albedo/db/pgtest"
	"albedo/hub/acphost/fakeagent"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// albedoBin and botBin are the binaries built once for the whole run.
var albedoBin, botBin string

// daemonRace says whether albedoBin and botBin are built with the race
// detector: only when ALBEDO_E2E_RACE=1 asks, as the long soaks do
// (README.md). The daemon's code runs under -race in the packages' own
// tests, which start its parts in process, clusters among them. Built so
// here as well, every daemon of the package's many tests paid the
// detector's cost, and the package, bound by its CPU on two cores, ran
// past the suite's time on its own; plain, it waits more than it computes.
var daemonRace = os.Getenv("ALBEDO_E2E_RACE") == "1"

func TestMain(m *testing.M) {
	if os.Getenv(fakeagent.Env) != "" { // the test binary run again by a daemon as a coding agent (agents_test.go)
		fakeagent.Main()
		os.Exit(0)
	}
	setParallel()
	quickRaceExit()
	sweepOrphans()
	dir, err := os.MkdirTemp("", "albedo-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	albedoBin = filepath.Join(dir, "albedo")
	botBin = filepath.Join(dir, "albedo-examplebot")
	// -buildvcs=auto whatever GOFLAGS says: the binary names the commit
	// it was built from (checkBuild).
	args := []string{"build", "-buildvcs=auto", "-o", dir + "/", "albedo/cmd/albedo", "albedo/cmd/albedo-examplebot"}
	if daemonRace {
		args = append(args[:1], append([]string{"-race"}, args[1:]...)...)
	}
	build := exec.Command("go", args...)
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build albedo:", err)
		os.Exit(1)
	}
	code := m.Run()
	stopChromium()
	pgtest.StopShared()
	// Every test stops what it starts: no albedo process may outlive it.
	if left := leftovers(); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "albedo processes left behind: %v\n", left)
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// quickRaceExit shortens the race detector's wait at the exit of every
// process the tests start (they inherit the environment; no test has
// started yet, so none reads it meanwhile). The test binary, run again
// as a coding agent, and with daemonRace the daemon, the CLI and the bot
// are built with -race, and a race-built program sleeps a second
// before it exits (GORACE's atexit_sleep_ms, default 1000) so that
// other goroutines can finish a report: every albedo command took 1.2 s
// for 0.05 s of work, and a graceful stop a second more; the tests run
// hundreds of them. A race report is written as the race is found, and
// the exit status still says there was one; 100 ms is left for a report
// under way at the exit. A GORACE that sets it already is kept.
func quickRaceExit() {
	gorace := os.Getenv("GORACE")
	if strings.Contains(gorace, "atexit_sleep_ms") {
		return
	}
	os.Setenv("GORACE", strings.TrimSpace(gorace+" atexit_sleep_ms=100"))
}

// leftovers lists live processes running the binaries under test.
func leftovers() []int { return leftoversOf() }

// leftoversOf lists live processes running the binaries under test that
// name one of homes on their command line or in their environment
// (ALBEDO_HOME=…): a process the test using those homes started, or that
// a command of its started, and none of the tests running beside it. No
// homes: every such process.
func leftoversOf(homes ...string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || exe != albedoBin && exe != botBin {
			continue
		}
		if !client.ProcessAlive(pid) {
			continue // a zombie already dead
		}
		if len(homes) > 0 && !namesAHome(e.Name(), homes) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// namesAHome says whether process pid's arguments or environment name
// one of homes.
func namesAHome(pid string, homes []string) bool {
	cmdline, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
	environ, _ := os.ReadFile(filepath.Join("/proc", pid, "environ"))
	for _, h := range homes {
		for _, f := range append(strings.Split(string(cmdline), "\x00"), strings.Split(string(environ), "\x00")...) {
			if f == h || f == "ALBEDO_HOME="+h || f == "--home="+h {
				return true
			}
		}
	}
	return false
}

// cli runs an albedo subcommand on home and returns its output.
func cli(t *testing.T, home string, args ...string) string {
	t.Helper()
	out, err := exec.Command(albedoBin, append([]string{"--home", home}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("albedo %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// stopOnCleanup stops whatever daemon runs on home when the test ends.
func stopOnCleanup(t *testing.T, home string) {
	t.Cleanup(func() { exec.Command(albedoBin, "--home", home, "stop").Run() })
}

// homesSwept are the homes whose processes a test's cleanup kills
// (sweepOnCleanup), each registered once.
var homesSwept sync.Map

// sweepOnCleanup kills, when the test ends, every process of the binaries
// under test that names home, whoever started it: a daemon a command of
// the test started, or one a failed test left running. It runs after the
// test's own cleanups that were registered after it, which stop what
// they started gracefully first.
func sweepOnCleanup(t *testing.T, home string) {
	if _, dup := homesSwept.LoadOrStore(home, true); dup {
		return
	}
	t.Cleanup(func() {
		homesSwept.Delete(home)
		for _, pid := range leftoversOf(home) {
			t.Logf("killing albedo process %d, left running on the test's home", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// runEnv names this test binary's run in the environment of every process
// it starts, and of theirs (sweepOrphans).
const runEnv = "ALBEDO_E2E_RUN"

// sweepOrphans kills the processes of an earlier run of this package
// whose test binary is gone: killed (a timeout, a SIGKILL) before its
// cleanups and TestMain's sweep could stop them. It names this run for
// the next one.
func sweepOrphans() {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		environ, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		for _, f := range strings.Split(string(environ), "\x00") {
			run, ok := strings.CutPrefix(f, runEnv+"=")
			if !ok {
				continue
			}
			if owner, err := strconv.Atoi(run); err == nil && owner != pid && !client.ProcessAlive(owner) {
				fmt.Fprintf(os.Stderr, "killing process %d of an earlier run (%d) that is gone\n", pid, owner)
				syscall.Kill(pid, syscall.SIGKILL)
			}
			break
		}
	}
	os.Setenv(runEnv, strconv.Itoa(os.Getpid()))
}

// daemon is one running `albedo daemon` process.
type daemon struct {
	t    *testing.T
	home string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done
	log  *logLines
}

// logLines is a daemon's log as read so far; tests read it while the
// reader goroutine appends.
type logLines struct {
	mu   sync.Mutex
	b    strings.Builder
	wake chan struct{} // closed at the next write (await)
}

func (l *logLines) WriteString(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
	if l.wake != nil {
		close(l.wake)
		l.wake = nil
	}
}

// await waits until the log holds substr, or ctx ends.
func (l *logLines) await(ctx context.Context, substr string) error {
	for {
		l.mu.Lock()
		if strings.Contains(l.b.String(), substr) {
			l.mu.Unlock()
			return nil
		}
		if l.wake == nil {
			l.wake = make(chan struct{})
		}
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return fmt.Errorf("%q not logged: %w", substr, ctx.Err())
		}
	}
}

// Write makes logLines an io.Writer, for a process's output.
func (l *logLines) Write(p []byte) (int, error) {
	l.WriteString(string(p))
	return len(p), nil
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// logText is what the daemon has logged so far.
func (d *daemon) logText() string { return d.log.String() }

// startDaemon runs `albedo daemon` on home and returns once its log says it
// listens (daemon.json is written right after; a client's calls keep
// looking for it for their CallRetry).
func startDaemon(t *testing.T, home string, args ...string) *daemon {
	t.Helper()
	return startDaemonUnder(t, home, nil, args...)
}

// startDaemonUnder is startDaemon with the daemon run by a wrapper that
// execs it (e.g. prlimit), so that the process is still the daemon's.
func startDaemonUnder(t *testing.T, home string, wrapper []string, args ...string) *daemon {
	t.Helper()
	sweepOnCleanup(t, home)
	argv := append(append(slices.Clone(wrapper), albedoBin, "daemon", "--home", home), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // dies with the test binary, even one killed
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{t: t, home: home, cmd: cmd, done: make(chan struct{}), log: &logLines{}}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			d.log.WriteString(sc.Text() + "\n")
			if !signalled && strings.Contains(sc.Text(), "daemon listening") {
				signalled = true
				close(ready)
			}
		}
		io.Copy(io.Discard, stderr)
		d.err = cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() { d.kill() })
	select {
	case <-ready:
	case <-d.done:
		t.Fatalf("daemon exited at start (%v): %s", d.err, d.log)
	case <-time.After(30 * time.Second):
		t.Fatalf("daemon did not listen within 30s: %s", d.log)
	}
	return d
}

// stop sends SIGTERM and waits for a clean exit.
func (d *daemon) stop() {
	d.t.Helper()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
		if d.err != nil {
			d.t.Fatalf("daemon exit: %v\n%s", d.err, d.log)
		}
	case <-time.After(30 * time.Second):
		// Say where it hangs: SIGQUIT makes a Go process print every
		// goroutine's stack (into the log we keep) and exit.
		_ = d.cmd.Process.Signal(syscall.SIGQUIT)
		<-d.done
		d.t.Fatalf("daemon did not stop within 30s; its log and stacks:\n%s", d.log)
	}
}

// kill sends SIGKILL and waits; safe after the process has gone.
func (d *daemon) kill() {
	_ = d.cmd.Process.Kill()
	<-d.done
}

// newClient returns a client of home that does not start daemons.
func newClient(t *testing.T, home string) *client.Client {
	t.Helper()
	sweepOnCleanup(t, home)
	c, err := client.New(client.Options{Home: home, Exe: albedoBin})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// withFake writes a config.toml whose provider "fake" is a fake
// OpenAI-compatible endpoint, and returns it.
func withFake(t *testing.T, home string) *fakeopenai.Server {
	t.Helper()
	f, err := fakeopenai.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cfg := fmt.Sprintf("[providers.fake]\nkind = \"openai\"\nbase_url = %q\ndefault_model = \"fake-model\"\n", f.URL)
	if err := os.WriteFile(filepath.Join(home, client.ConfigFile), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// withFakeAnd is withFake with more of config.toml after the fake's
// profile (its context_tokens, its prices, other profiles).
func withFakeAnd(t *testing.T, home, more string) *fakeopenai.Server {
	t.Helper()
	f := withFake(t, home)
	cfg, err := os.OpenFile(filepath.Join(home, client.ConfigFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cfg.Close()
	if _, err := cfg.WriteString(more); err != nil {
		t.Fatal(err)
	}
	return f
}

// fixtureOpts are the ways the tests' setups differ.
type fixtureOpts struct {
	// fake gives the daemon provider "fake", a fake OpenAI-compatible
	// endpoint (fixture.fake); its config.toml is written before the daemon
	// starts, so that the first turn already has it.
	fake bool
	// agent gives the daemon provider "coder", the fake coding agent
	// (withAgent), and a workspace for it (fixture.ws): a session created
	// without a provider is the agent's, in it.
	agent bool
	// cli leaves the daemon to the CLI: `albedo sessions` starts it, detached,
	// as a user's first command does, and `albedo stop` ends it with the
	// test. For tests that stop and start it with the CLI; the fixture then
	// holds no process (fixture.d is nil).
	cli bool
	// session, if set, is the id of a session created with create.
	session string
	create  wire.SessionCreate
	// args are the daemon's flags.
	args []string
}

// fixture is a daemon on a temporary home and a client of it, ready for a
// test: what the tests would otherwise set up one by one.
type fixture struct {
	home string
	fake *fakeopenai.Server // with fixtureOpts.fake
	ws   string             // the agent's workspace, with fixtureOpts.agent
	d    *daemon            // nil with fixtureOpts.cli
	c    *client.Client     // the owner's client; it starts no daemons
	ctx  context.Context    // ends with the test, or after 60 s
	s    wire.Session       // as created, with fixtureOpts.session
}

// newFixture sets up what opts ask for. Each piece registers its own
// cleanup as it is made, so they run in reverse: the daemon stops before the
// fake provider it talks to closes (coder/websocket's newConnTest works the
// same way).
func newFixture(t *testing.T, opts fixtureOpts) *fixture {
	t.Helper()
	fx := &fixture{home: t.TempDir()}
	if opts.fake {
		fx.fake = withFake(t, fx.home)
	}
	if opts.agent {
		fx.ws = withAgent(t, fx.home)
		if opts.create.Provider == "" {
			opts.create.Provider, opts.create.Workspace = "coder", fx.ws
		}
	}
	if opts.cli {
		stopOnCleanup(t, fx.home)
		cli(t, fx.home, "sessions") // starts the daemon
	} else {
		fx.d = startDaemon(t, fx.home, opts.args...)
	}
	fx.c = newClient(t, fx.home)
	fx.ctx = ctxT(t)
	if opts.session != "" {
		if opts.create.Title == "" {
			// Titled, as the page and the terminal show it anyway (an
			// id of 8 characters or fewer): an untitled session would be
			// titled after its first turn, an event tests that count
			// events do not expect.
			opts.create.Title = opts.session
		}
		s, err := fx.c.CreateSession(fx.ctx, opts.session, opts.create)
		if err != nil {
			t.Fatalf("create session %s: %v", opts.session, err)
		}
		fx.s = s
	}
	return fx
}

func errorsIsStale(err error) bool { return errors.Is(err, client.ErrStaleETag) }

// withFakes writes a config.toml with one OpenAI-compatible profile for
// each name, each its own fake endpoint, and returns them by name.
func withFakes(t *testing.T, home string, names ...string) map[string]*fakeopenai.Server {
	t.Helper()
	fakes := map[string]*fakeopenai.Server{}
	var cfg strings.Builder
	for _, name := range names {
		f, err := fakeopenai.Start()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		fakes[name] = f
		fmt.Fprintf(&cfg, "[providers.%s]\nkind = \"openai\"\nbase_url = %q\ndefault_model = \"%s-model\"\n\n", name, f.URL, name)
	}
	if err := os.WriteFile(filepath.Join(home, client.ConfigFile), []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return fakes
}

// twoFakes is withFakes of "first" and "second".
func twoFakes(t *testing.T, home string) (first, second *fakeopenai.Server) {
	t.Helper()
	f := withFakes(t, home, "first", "second")
	return f["first"], f["second"]
}
