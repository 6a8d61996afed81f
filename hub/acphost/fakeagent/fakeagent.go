package fakeagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// Env is the variable that makes a test binary the fake agent; its value
// is the mode ("1", "silent", "noload").
const Env = "ALBEDO_FAKE_AGENT"

// QuickExit is the variable, NAME=value, that spares a race-built fake
// agent the second the race detector sleeps at its exit: tests give it
// with Env, since the daemon passes an agent none of its own.
const QuickExit = "GORACE=atexit_sleep_ms=0"

// Main runs the fake agent on stdin and stdout until stdin closes.
func Main() {
	mode := os.Getenv(Env)
	if mode == "silent" {
		select {} // never answers
	}
	a := &agent{mode: mode}
	conn := acp.NewAgentSideConnection(a, os.Stdout, os.Stdin)
	a.conn = conn
	<-conn.Done()
}

type agent struct {
	mode string
	conn *acp.AgentSideConnection
	cwd  string
}

var _ acp.Agent = (*agent)(nil)
var _ acp.AgentLoader = (*agent)(nil)

func (a *agent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber, AgentCapabilities: acp.AgentCapabilities{LoadSession: a.mode != "noload"},
		AgentInfo: &acp.Implementation{Name: "fakeagent", Version: "1"}}, nil
}

func (a *agent) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

func (a *agent) NewSession(_ context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	a.cwd = p.Cwd
	id := fmt.Sprintf("fake-%d", time.Now().UnixNano())
	if err := a.save(id, 0); err != nil {
		return acp.NewSessionResponse{}, err
	}
	return acp.NewSessionResponse{SessionId: acp.SessionId(id)}, nil
}

func (a *agent) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	a.cwd = p.Cwd
	if _, err := a.load(string(p.SessionId)); err != nil {
		return acp.LoadSessionResponse{}, fmt.Errorf("no session %s here", p.SessionId)
	}
	// What it remembers is replayed to the client, as ACP asks.
	_ = a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: p.SessionId, Update: acp.UpdateAgentMessageText("REPLAYED")})
	return acp.LoadSessionResponse{}, nil
}

func (a *agent) file(id string) string { return filepath.Join(a.cwd, ".fakeagent", id) }

func (a *agent) save(id string, n int) error {
	if err := os.MkdirAll(filepath.Dir(a.file(id)), 0o755); err != nil {
		return err
	}
	return os.WriteFile(a.file(id), []byte(strconv.Itoa(n)), 0o644)
}

func (a *agent) load(id string) (int, error) {
	b, err := os.ReadFile(a.file(filepath.Base(id)))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(b))
}

func (a *agent) Cancel(context.Context, acp.CancelNotification) error { return nil }
func (a *agent) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	return acp.CloseSessionResponse{}, nil
}
func (a *agent) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, nil
}
func (a *agent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, nil
}
func (a *agent) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, nil
}
func (a *agent) SetSessionMode(context.Context, acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, nil
}

// Prompt runs the prompt's command.
func (a *agent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	var text string
	for _, b := range p.Prompt {
		if b.Text != nil {
			text += b.Text.Text
		}
	}
	n, _ := a.load(string(p.SessionId))
	_ = a.save(string(p.SessionId), n+1)
	cmd := text
	if i := strings.LastIndex(text, "\n\n"); i >= 0 {
		cmd = text[i+2:]
	}
	t := &turn{a: a, ctx: ctx, sid: p.SessionId, text: text, prompts: n + 1}
	f := strings.Fields(cmd)
	if len(f) == 0 {
		f = []string{"hello"}
	}
	stop, err := t.run(f[0], f[1:])
	if err != nil {
		return acp.PromptResponse{}, err
	}
	if ctx.Err() != nil {
		stop = acp.StopReasonCancelled
	}
	return acp.PromptResponse{StopReason: stop, Usage: &acp.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}}, nil
}
