package acphost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"albedo/hub/mcphost"
	"albedo/wire"
)

// Commands run for the agent (terminal/*): each a call in the log
// (acp:terminal, allowed unless a rule says otherwise), run in the
// workspace in a process group of its own, its output kept bounded and
// streamed to viewers, killed past the profile's terminal_timeout, and
// at the turn's end.

// Bounds of the commands run for an agent.
const (
	maxTerminals      = 16      // alive at once
	maxTerminalOutput = 1 << 20 // kept of one's output
	maxCommandArgs    = 256
	maxCommandBytes   = 4 << 10 // the program, and each argument
	maxCommandEnv     = 64
	outputEvery       = 100 * time.Millisecond // how often the output streams
)

type terminals struct {
	a    *agent
	mu   sync.Mutex
	m    map[string]*terminal
	gone []*terminal // the last released, whose output a call's end may still name
}

// maxGone bounds the released commands kept for their output.
const maxGone = 16

// terminal is one command run for the agent.
type terminal struct {
	id, call string
	cmd      *exec.Cmd
	out      *mcphost.Tail
	done     chan struct{} // closed when it ended and its result is committed
	timedOut bool
	status   acp.TerminalExitStatus
	mu       sync.Mutex
}

func (ts *terminals) get(id string) (*terminal, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t := ts.m[id]; t != nil {
		return t, nil
	}
	for _, t := range ts.gone {
		if t.id == id {
			return t, nil
		}
	}
	return nil, fmt.Errorf("no terminal %q", wire.CutUTF8(id, 64))
}

// release kills a command and forgets it.
func (ts *terminals) release(id string) {
	ts.mu.Lock()
	t := ts.m[id]
	delete(ts.m, id)
	if t != nil {
		ts.gone = append(ts.gone, t)
		if len(ts.gone) > maxGone {
			ts.gone = ts.gone[1:]
		}
	}
	ts.mu.Unlock()
	if t != nil {
		t.kill()
	}
}

// killAll kills every command and waits for their ends to be committed
// (at most stopGrace).
func (ts *terminals) killAll() {
	ts.mu.Lock()
	all := make([]*terminal, 0, len(ts.m))
	for _, t := range ts.m {
		all = append(all, t)
	}
	ts.mu.Unlock()
	for _, t := range all {
		t.kill()
	}
	for _, t := range all {
		select {
		case <-t.done:
		case <-time.After(stopGrace):
		}
	}
}

func (t *terminal) kill() {
	if t.cmd.Process != nil {
		_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	}
}

func (t *terminal) exitStatus() acp.TerminalExitStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}

// output is what terminal/output answers.
func (t *terminal) output() acp.TerminalOutputResponse {
	s, more := t.out.Newest(t.out.Max)
	r := acp.TerminalOutputResponse{Output: s, Truncated: more}
	select {
	case <-t.done:
		st := t.exitStatus()
		r.ExitStatus = &st
	default:
	}
	return r
}

// createTerminal runs the agent's command, as the policy allows.
func (ts *turnState) createTerminal(p acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	a := ts.a
	switch {
	case p.Command == "" || len(p.Command) > maxCommandBytes:
		return acp.CreateTerminalResponse{}, fmt.Errorf("the command is empty or over %d bytes", maxCommandBytes)
	case len(p.Args) > maxCommandArgs:
		return acp.CreateTerminalResponse{}, fmt.Errorf("more than %d arguments", maxCommandArgs)
	case len(p.Env) > maxCommandEnv:
		return acp.CreateTerminalResponse{}, fmt.Errorf("more than %d environment variables", maxCommandEnv)
	}
	env := append(mcphost.BaseEnv(a.host.getenv), a.cfg.Env...)
	for _, arg := range p.Args {
		if len(arg) > maxCommandBytes {
			return acp.CreateTerminalResponse{}, fmt.Errorf("an argument is over %d bytes", maxCommandBytes)
		}
	}
	for _, e := range p.Env {
		if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") || len(e.Name)+len(e.Value) > maxCommandBytes {
			return acp.CreateTerminalResponse{}, fmt.Errorf("the environment variable %q is not one", wire.CutUTF8(e.Name, 64))
		}
		env = append(env, e.Name+"="+e.Value)
	}
	dir := a.workspace
	if p.Cwd != nil && *p.Cwd != "" {
		rel, err := a.inWorkspace(*p.Cwd)
		if err != nil {
			return acp.CreateTerminalResponse{}, err
		}
		fi, err := a.root.Stat(rel)
		if err != nil || !fi.IsDir() {
			return acp.CreateTerminalResponse{}, fmt.Errorf("the directory %q is not one of the workspace's", wire.CutUTF8(*p.Cwd, 256))
		}
		dir = a.workspace + "/" + rel
	}
	a.terminals.mu.Lock()
	n := len(a.terminals.m)
	a.terminals.mu.Unlock()
	if n >= maxTerminals {
		return acp.CreateTerminalResponse{}, fmt.Errorf("%d commands run already: release one first", maxTerminals)
	}
	line := strings.Join(append([]string{p.Command}, p.Args...), " ")
	args, _ := json.Marshal(map[string]any{"command": p.Command, "args": p.Args, "cwd": dir})
	c := Call{Tool: ToolTerminal, Title: wire.CutUTF8(line, wire.MaxToolTitleBytes), Arguments: args}
	ok, err := ts.daemonCall(&c)
	if err != nil || !ok {
		return acp.CreateTerminalResponse{}, err
	}
	limit := maxTerminalOutput
	if p.OutputByteLimit != nil && *p.OutputByteLimit > 0 {
		limit = min(limit, *p.OutputByteLimit)
	}
	t := &terminal{id: "term-" + c.ID, call: c.ID, out: &mcphost.Tail{Max: limit}, done: make(chan struct{})}
	t.cmd = exec.Command(p.Command, p.Args...)
	t.cmd.Dir, t.cmd.Env = dir, env
	t.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	t.cmd.Stdout = &streamed{t: t, sink: ts.t.Sink}
	t.cmd.Stderr = t.cmd.Stdout
	bg := context.WithoutCancel(ts.ctx)
	if err := t.cmd.Start(); err != nil {
		_ = ts.t.Sink.Result(bg, Result{ID: c.ID, State: wire.ToolFailed, Error: "the command could not start: " + err.Error()})
		return acp.CreateTerminalResponse{}, errors.New("the command could not start: " + err.Error())
	}
	a.terminals.mu.Lock()
	a.terminals.m[t.id] = t
	a.terminals.mu.Unlock()
	timeout := time.AfterFunc(a.cfg.TerminalTimeout, func() {
		t.mu.Lock()
		t.timedOut = true
		t.mu.Unlock()
		t.kill()
	})
	go func() {
		err := t.cmd.Wait()
		timeout.Stop()
		ts.t.Sink.Output(t.call, "")
		t.ended(bg, ts.t.Sink, err, a.cfg.TerminalTimeout)
	}()
	return acp.CreateTerminalResponse{TerminalId: t.id}, nil
}

// ended records how the command ended and commits its result.
func (t *terminal) ended(ctx context.Context, s Sink, err error, timeout time.Duration) {
	st := acp.TerminalExitStatus{}
	state, why := wire.ToolCompleted, ""
	var ee *exec.ExitError
	switch {
	case err == nil:
		st.ExitCode = acp.Ptr(0)
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			st.Signal = acp.Ptr(ws.Signal().String())
			state, why = wire.ToolFailed, "killed by "+ws.Signal().String()
		} else {
			st.ExitCode = acp.Ptr(ee.ExitCode())
			state, why = wire.ToolFailed, fmt.Sprintf("exit status %d", ee.ExitCode())
		}
	default:
		state, why = wire.ToolFailed, err.Error()
	}
	t.mu.Lock()
	t.status = st
	if t.timedOut {
		why = fmt.Sprintf("killed: it ran past %s (terminal_timeout)", timeout)
	}
	t.mu.Unlock()
	out, more := t.out.Newest(wire.MaxToolOutput)
	if more {
		out = "[earlier output left out]\n" + out
	}
	_ = s.Result(ctx, Result{ID: t.call, State: state, Output: out, Error: why})
	close(t.done)
}

// streamed is a command's stdout and stderr: kept, and streamed to the
// session's viewers at most every outputEvery.
type streamed struct {
	t    *terminal
	sink Sink
	last time.Time
}

func (w *streamed) Write(p []byte) (int, error) {
	n, _ := w.t.out.Write(p)
	if now := time.Now(); now.Sub(w.last) >= outputEvery {
		w.last = now
		s, _ := w.t.out.Newest(wire.MaxToolOutputTail)
		w.sink.Output(w.t.call, s)
	}
	return n, nil
}
