package acphost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Host runs the coding agents of the sessions whose provider is an acp
// profile: one process per session, started at its first turn, kept
// while the session is used, stopped when idle (the profile's
// stop_idle) or when the daemon stops.
type Host struct {
	log    *slog.Logger
	getenv func(string) string

	mu     sync.Mutex
	agents map[string]*agent // by session
	closed bool
	wg     sync.WaitGroup // the agents' watchers
}

// New returns a host; getenv reads the daemon's environment (what an
// agent's program gets of it: mcphost.BaseEnv); nil is os.Getenv.
func New(log *slog.Logger, getenv func(string) string) *Host {
	if getenv == nil {
		getenv = os.Getenv
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Host{log: log, getenv: getenv, agents: map[string]*agent{}}
}

// errClosed refuses a turn once the host is closing.
var errClosed = errors.New("the daemon is stopping")

// Prompt runs t: the session's agent, started (and its session opened)
// if it does not run, is sent the input and streams its doings to
// t.Sink until its prompt ends. It returns nil when the agent ended its
// turn; an interrupt (ctx) sends session/cancel and waits a while for
// the agent to stop.
func (h *Host) Prompt(ctx context.Context, t Turn) error {
	if err := CheckWorkspace(t.Workspace); err != nil {
		return err
	}
	a, err := h.agentFor(ctx, t)
	if err != nil {
		return err
	}
	defer a.idleAfter()
	return a.prompt(ctx, t)
}

// CheckWorkspace says why dir cannot be an agent's workspace.
func CheckWorkspace(dir string) error {
	if dir == "" || !filepath.IsAbs(dir) {
		return fmt.Errorf("the session's workspace %q is not an absolute path: a coding agent's session needs the directory it works in", dir)
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return fmt.Errorf("the session's workspace %s is not a directory on the daemon's machine", dir)
	}
	return nil
}

// agentFor returns the session's agent, busy for t: the running one if
// it was started for the same profile, settings and workspace, else a
// new one (the old one stopped), its session opened.
func (h *Host) agentFor(ctx context.Context, t Turn) (*agent, error) {
	key := t.Profile + "\x00" + t.Config.Key() + "\x00" + t.Workspace
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, errClosed
	}
	old := h.agents[t.Session]
	if old != nil && old.key == key && old.claim() {
		h.mu.Unlock()
		return old, nil
	}
	a := newAgent(h, t, key)
	h.agents[t.Session] = a
	h.mu.Unlock()
	if old != nil {
		old.stop("its profile or workspace changed")
	}
	if err := a.start(ctx, t); err != nil {
		a.stopWithin("it failed to start", 0)
		h.forget(a)
		return nil, err
	}
	return a, nil
}

// forget drops a, stopped, from the host's agents.
func (h *Host) forget(a *agent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.agents[a.session] == a {
		delete(h.agents, a.session)
	}
}

// Stop stops a session's agent, if it runs (the session was deleted).
func (h *Host) Stop(session string) {
	h.mu.Lock()
	a := h.agents[session]
	delete(h.agents, session)
	h.mu.Unlock()
	if a != nil {
		a.stop("its session was deleted")
	}
}

// Running counts the agents that run.
func (h *Host) Running() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.agents)
}

// Close stops every agent and waits for their processes to end.
func (h *Host) Close() {
	h.mu.Lock()
	h.closed = true
	all := make([]*agent, 0, len(h.agents))
	for _, a := range h.agents {
		all = append(all, a)
	}
	h.agents = map[string]*agent{}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, a := range all {
		wg.Go(func() { a.stop("the daemon stopped") })
	}
	wg.Wait()
	h.wg.Wait()
}

// stopGrace is how long an agent has to end after its stdin closes,
// and an interrupted prompt to end after session/cancel, before the
// process is killed.
const stopGrace = 3 * time.Second
