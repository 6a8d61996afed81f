package acphost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"albedo/hub/mcphost"
	"albedo/hub/provider"
	"albedo/wire"
)

// agent is one session's agent process and its ACP connection.
type agent struct {
	host      *Host
	session   string
	key       string // what it was started for (agentFor)
	cfg       provider.AgentConfig
	workspace string
	root      *os.Root // the workspace, which fs/* and terminal/* stay inside

	cmd     *exec.Cmd
	stdin   io.WriteCloser
	conn    *acp.ClientSideConnection
	stderr  *mcphost.Tail
	exited  chan struct{} // closed when the process ended; exitErr says how
	exitErr error
	caps    acp.AgentCapabilities
	sid     acp.SessionId
	// tell says the agent's session is new while the albedo session has
	// earlier messages: its next prompt carries the transcript.
	tell bool

	cl        *client
	terminals *terminals

	mu       sync.Mutex
	busy     bool // a turn uses it
	stopped  bool
	idle     *time.Timer
	stopOnce sync.Once
}

func newAgent(h *Host, t Turn, key string) *agent {
	a := &agent{host: h, session: t.Session, key: key, cfg: t.Config, workspace: t.Workspace, busy: true,
		stderr: &mcphost.Tail{Max: maxStderr}, exited: make(chan struct{})}
	a.cl = &client{a: a, inflight: make(chan struct{}, maxInflight)}
	a.terminals = &terminals{a: a, m: map[string]*terminal{}}
	return a
}

// claim makes a running agent busy for a turn; false if it stopped.
func (a *agent) claim() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped || a.busy {
		return false
	}
	select {
	case <-a.exited:
		return false
	default:
	}
	a.busy = true
	if a.idle != nil {
		a.idle.Stop()
	}
	return true
}

// idleAfter frees the agent after a turn: unused for its stop_idle, it
// stops.
func (a *agent) idleAfter() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.busy = false
	if a.stopped {
		return
	}
	a.idle = time.AfterFunc(a.cfg.StopIdle, func() {
		a.mu.Lock()
		if a.busy || a.stopped {
			a.mu.Unlock()
			return
		}
		a.stopped = true
		a.mu.Unlock()
		a.host.forget(a)
		a.stop("it was idle")
	})
}

// start starts the process in the workspace, initializes the
// connection and opens the session's agent session, all within the
// profile's start_timeout.
func (a *agent) start(ctx context.Context, t Turn) error {
	root, err := os.OpenRoot(a.workspace)
	if err != nil {
		return fmt.Errorf("open the workspace: %w", err)
	}
	a.root = root
	cmd := exec.Command(a.cfg.Command[0], a.cfg.Command[1:]...)
	cmd.Dir, cmd.Env, cmd.Stderr = a.workspace, append(mcphost.BaseEnv(a.host.getenv), a.cfg.Env...), a.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its children are stopped with it
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the agent %q: %w", a.cfg.Command[0], err)
	}
	a.cmd, a.stdin = cmd, stdin
	a.host.wg.Go(func() {
		a.exitErr = cmd.Wait()
		close(a.exited)
	})
	a.conn = acp.NewClientSideConnection(a.cl, stdin, stdout)
	a.conn.SetLogger(quietLogger(a.host.log.With("session", a.session)))

	sctx, cancel := context.WithTimeout(ctx, a.cfg.StartTimeout)
	defer cancel()
	init, err := a.conn.Initialize(sctx, acp.InitializeRequest{
		ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{
			Fs:       acp.FileSystemCapabilities{ReadTextFile: a.cfg.FS, WriteTextFile: a.cfg.FS},
			Terminal: a.cfg.Terminal,
		},
		ClientInfo: &acp.Implementation{Name: "albedo", Version: "1"},
	})
	if err != nil {
		return a.startFailed(sctx, "initialize", err)
	}
	a.caps = init.AgentCapabilities
	return a.open(sctx, t)
}

// open opens the agent session of the turn: the one the store holds,
// loaded where the agent can, else a new one.
func (a *agent) open(ctx context.Context, t Turn) error {
	how, reason := OpenedNew, ""
	if t.Resume != "" {
		if !a.caps.LoadSession {
			how, reason = OpenedAnew, "the agent cannot load its earlier sessions (it offers no loadSession)"
		} else {
			a.cl.setLoading(true)
			_, err := a.conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: acp.SessionId(t.Resume), Cwd: a.workspace, McpServers: []acp.McpServer{}})
			a.cl.setLoading(false)
			if err == nil {
				a.sid = acp.SessionId(t.Resume)
				return t.Sink.Opened(ctx, t.Resume, OpenedLoaded, "")
			}
			if ctx.Err() != nil || a.gone() {
				return a.startFailed(ctx, "session/load", err)
			}
			how, reason = OpenedAnew, "the agent could not load its session: "+errText(err)
		}
	} else if len(t.Transcript) > 0 {
		how, reason = OpenedAnew, "the agent had no session of this conversation"
	}
	s, err := a.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: a.workspace, McpServers: []acp.McpServer{}})
	if err != nil {
		return a.startFailed(ctx, "session/new", err)
	}
	if s.SessionId == "" || len(s.SessionId) > maxSessionID {
		return fmt.Errorf("the agent answered session/new with no usable session id")
	}
	a.sid = s.SessionId
	a.tell = how == OpenedAnew
	return t.Sink.Opened(ctx, string(s.SessionId), how, reason)
}

// maxSessionID bounds the agent's session id, which the store keeps.
const maxSessionID = 1024

// exitedNow says whether the process ended, waiting a little for an
// end the closed connection foretells.
func (a *agent) exitedNow() bool {
	select {
	case <-a.exited:
		return true
	case <-time.After(200 * time.Millisecond):
		return false
	}
}

// gone says whether the process ended or its connection closed.
func (a *agent) gone() bool {
	select {
	case <-a.exited:
		return true
	case <-a.conn.Done():
		return true
	default:
		return false
	}
}

// startFailed says why step of the start failed: the agent's silence,
// its exit (with its last words), or its error.
func (a *agent) startFailed(ctx context.Context, step string, err error) error {
	switch {
	case a.gone():
		return fmt.Errorf("the agent exited before it answered %s%s", step, a.lastWords())
	case ctx.Err() != nil:
		return fmt.Errorf("the agent did not answer %s within %s (start_timeout)", step, a.cfg.StartTimeout)
	}
	return fmt.Errorf("the agent refused %s: %s", step, errText(err))
}

// lastWords is how the process ended and the end of its stderr, for an
// error; "" while it runs.
func (a *agent) lastWords() string {
	select {
	case <-a.exited:
	case <-time.After(stopGrace):
		return ""
	}
	var b strings.Builder
	if a.exitErr != nil {
		fmt.Fprintf(&b, " (%v)", a.exitErr)
	}
	if s := strings.TrimSpace(a.stderr.String()); s != "" {
		fmt.Fprintf(&b, "; its last words: %s", lastLines(s, 5))
	}
	return b.String()
}

// stop ends the process: its stdin closed, then, after stopGrace, its
// process group killed; its commands killed too. It returns once the
// process has ended.
func (a *agent) stop(why string) { a.stopWithin(why, stopGrace) }

// stopWithin is stop with grace for the process to end on its own.
func (a *agent) stopWithin(why string, grace time.Duration) {
	a.stopOnce.Do(func() {
		a.mu.Lock()
		a.stopped = true
		if a.idle != nil {
			a.idle.Stop()
		}
		a.mu.Unlock()
		a.terminals.killAll()
		if a.cmd == nil {
			return
		}
		a.host.log.Info("coding agent stops", "session", a.session, "why", why)
		_ = a.stdin.Close()
		select {
		case <-a.exited:
		case <-time.After(grace):
		}
		_ = syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
		<-a.exited
		if a.root != nil {
			_ = a.root.Close()
		}
	})
}

// errText is an error's words, an ACP error's message and data.
func errText(err error) string {
	var re *acp.RequestError
	if errors.As(err, &re) {
		s := re.Message
		if re.Data != nil {
			s += fmt.Sprintf(" (%v)", re.Data)
		}
		return wire.CutUTF8(s, maxErrBytes)
	}
	return wire.CutUTF8(err.Error(), maxErrBytes)
}

// maxErrBytes bounds an agent's words in an error.
const maxErrBytes = 2 << 10

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return wire.CutUTF8(strings.Join(lines, "\n"), maxErrBytes)
}
