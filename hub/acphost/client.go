package acphost

import (
	"context"
	"errors"
	"sync"

	acp "github.com/coder/acp-go-sdk"
)

// client is the daemon's side of an agent's connection (acp.Client): the
// running turn's updates and permission requests, and the workspace's
// files and commands, served to the agent.
type client struct {
	a        *agent
	inflight chan struct{} // a slot per request of the agent's being answered

	mu      sync.Mutex
	cur     *turnState // nil between turns
	loading bool       // session/load replays what the log has already
}

var _ acp.Client = (*client)(nil)

// maxInflight bounds the agent's requests answered at once: the SDK
// answers each on a goroutine of its own.
const maxInflight = 64

var errBusy = errors.New("too many requests at once; wait for an answer before asking more")

// enter takes a slot for one of the agent's requests.
func (cl *client) enter() (func(), error) {
	select {
	case cl.inflight <- struct{}{}:
		return func() { <-cl.inflight }, nil
	default:
		return nil, errBusy
	}
}

func (cl *client) setTurn(ts *turnState) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.cur = ts
}

func (cl *client) setLoading(v bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.loading = v
}

func (cl *client) turn() (*turnState, bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.cur, cl.loading
}

// SessionUpdate relays an update of the running prompt; between prompts,
// and while session/load replays, there is nothing to relay.
func (cl *client) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	ts, loading := cl.turn()
	if ts == nil || loading || n.SessionId != cl.a.sid {
		return nil
	}
	ts.update(n.Update)
	return nil
}

// RequestPermission asks the session's policy, or its people.
func (cl *client) RequestPermission(_ context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	leave, err := cl.enter()
	if err != nil {
		return acp.RequestPermissionResponse{}, err
	}
	defer leave()
	ts, _ := cl.turn()
	if ts == nil || p.SessionId != cl.a.sid {
		return cancelled(), nil
	}
	return ts.permission(p), nil
}

// ReadTextFile serves a file of the workspace.
func (cl *client) ReadTextFile(_ context.Context, p acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	leave, err := cl.enter()
	if err != nil {
		return acp.ReadTextFileResponse{}, err
	}
	defer leave()
	if !cl.a.cfg.FS {
		return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
	}
	return cl.a.readFile(p)
}

// WriteTextFile writes a file of the workspace, as the policy allows.
func (cl *client) WriteTextFile(_ context.Context, p acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	leave, err := cl.enter()
	if err != nil {
		return acp.WriteTextFileResponse{}, err
	}
	defer leave()
	if !cl.a.cfg.FS {
		return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
	}
	ts, _ := cl.turn()
	if ts == nil {
		return acp.WriteTextFileResponse{}, errors.New("no turn runs: a file is written only during one")
	}
	return acp.WriteTextFileResponse{}, ts.writeFile(p)
}

// CreateTerminal runs a command in the workspace, as the policy allows.
func (cl *client) CreateTerminal(_ context.Context, p acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	leave, err := cl.enter()
	if err != nil {
		return acp.CreateTerminalResponse{}, err
	}
	defer leave()
	if !cl.a.cfg.Terminal {
		return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
	}
	ts, _ := cl.turn()
	if ts == nil {
		return acp.CreateTerminalResponse{}, errors.New("no turn runs: a command runs only during one")
	}
	return ts.createTerminal(p)
}

func (cl *client) TerminalOutput(_ context.Context, p acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	t, err := cl.a.terminals.get(p.TerminalId)
	if err != nil {
		return acp.TerminalOutputResponse{}, err
	}
	return t.output(), nil
}

// WaitForTerminalExit waits for a command; it takes no slot, since it
// may wait as long as the command runs (terminal_timeout bounds that).
func (cl *client) WaitForTerminalExit(ctx context.Context, p acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	t, err := cl.a.terminals.get(p.TerminalId)
	if err != nil {
		return acp.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return acp.WaitForTerminalExitResponse{}, ctx.Err()
	}
	st := t.exitStatus()
	return acp.WaitForTerminalExitResponse{ExitCode: st.ExitCode, Signal: st.Signal}, nil
}

func (cl *client) KillTerminal(_ context.Context, p acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	t, err := cl.a.terminals.get(p.TerminalId)
	if err != nil {
		return acp.KillTerminalResponse{}, err
	}
	t.kill()
	return acp.KillTerminalResponse{}, nil
}

func (cl *client) ReleaseTerminal(_ context.Context, p acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	cl.a.terminals.release(p.TerminalId)
	return acp.ReleaseTerminalResponse{}, nil
}
