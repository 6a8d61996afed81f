package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"albedo/hub/mcphost"
)

// KindACP is the kind of a profile that is a coding agent speaking the
// Agent Client Protocol on its stdin and stdout: the daemon starts it in
// a session's workspace, and it runs its own tools (hub/acphost).
const KindACP = "acp"

// Defaults of an acp profile's settings.
const (
	DefaultAgentStopIdle        = 10 * time.Minute
	DefaultAgentStartTimeout    = time.Minute
	DefaultAgentTerminalTimeout = 10 * time.Minute
	// DefaultAgentMaxCalls bounds an agent's tool calls in one turn when
	// its profile sets no max_tool_calls: an agent reads and edits many
	// files in a turn, so more than a model's calls.
	DefaultAgentMaxCalls = MaxToolCallsLimit
)

// Bounds of an acp profile's command and environment.
const (
	maxAgentArgs     = 256
	maxAgentArgBytes = 4 << 10
	maxAgentEnv      = 64
)

// AgentConfig is what runs an acp profile's agent, its values read.
type AgentConfig struct {
	Command []string
	Env     []string // NAME=value, beside the few of the daemon's (mcphost.BaseEnv)
	// StopIdle stops the agent of a session unused this long; its next
	// turn starts it again, resuming the agent's session where it can.
	StopIdle time.Duration
	// StartTimeout bounds the start: the program, initialize, and
	// session/new or session/load.
	StartTimeout time.Duration
	// FS and Terminal say whether the daemon serves the agent files of
	// the workspace (fs/*) and commands run in it (terminal/*).
	FS, Terminal bool
	// TerminalTimeout kills a command that runs longer.
	TerminalTimeout time.Duration
	// MaxCalls bounds the agent's tool calls in one turn: past it the
	// turn is cancelled and fails, saying why.
	MaxCalls int
}

// Key says what makes a running agent this configuration's: an agent
// started with another key is stopped before the next turn.
func (c AgentConfig) Key() string {
	return fmt.Sprintf("%q %q fs=%t terminal=%t", c.Command, c.Env, c.FS, c.Terminal)
}

// ACP is an acp profile: it answers turns through the daemon's agent host
// (hub/acphost), not through Stream.
type ACP struct {
	name string
	cfg  AgentConfig
}

// errNoAgentHost answers a turn of an acp profile in a daemon that hosts
// no agents (an embedding that gave the hub none).
var errNoAgentHost = errors.New("this daemon runs no coding agents (acp profiles)")

// Agent is what runs the profile's agent.
func (a *ACP) Agent() AgentConfig { return a.cfg }

// Name is the profile's name.
func (a *ACP) Name() string { return a.name }

// Stream implements Provider; an agent's turns run through the agent
// host, so this only says there is none.
func (a *ACP) Stream(context.Context, Request, func(string)) error { return errNoAgentHost }

// Author implements Provider: the agent's replies are the profile's.
func (a *ACP) Author(Request) string { return a.name }

// newACP checks profile n of kind acp and reads its values.
func newACP(n string, p Profile, getenv func(string) string) (*ACP, error) {
	at := func(format string, a ...any) error {
		return fmt.Errorf("provider %q: "+format, append([]any{n}, a...)...)
	}
	switch {
	case len(p.Command) == 0 || p.Command[0] == "":
		return nil, at("kind acp needs command = [\"program\", \"arg\", …], the agent to start")
	case len(p.Command) > maxAgentArgs || slices.ContainsFunc(p.Command, func(a string) bool { return len(a) > maxAgentArgBytes }):
		return nil, at("command: at most %d arguments of %d bytes", maxAgentArgs, maxAgentArgBytes)
	case p.BaseURL != "" || p.APIKeyEnv != "":
		return nil, at("base_url and api_key_env are an API's; an acp agent takes command and env")
	case len(p.Env) > maxAgentEnv:
		return nil, at("env: at most %d values", maxAgentEnv)
	case p.StopIdle.Duration < 0 || p.StartTimeout.Duration < 0 || p.TerminalTimeout.Duration < 0:
		return nil, at("stop_idle, start_timeout and terminal_timeout are positive durations")
	}
	cfg := AgentConfig{Command: slices.Clone(p.Command), StopIdle: p.StopIdle.Duration, StartTimeout: p.StartTimeout.Duration,
		TerminalTimeout: p.TerminalTimeout.Duration, FS: p.FS == nil || *p.FS, Terminal: p.Terminal == nil || *p.Terminal,
		MaxCalls: p.MaxToolCalls}
	env, err := mcphost.ResolveEnv(p.Env, getenv)
	if err != nil {
		return nil, at("%v", err)
	}
	cfg.Env = env
	if cfg.StopIdle == 0 {
		cfg.StopIdle = DefaultAgentStopIdle
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = DefaultAgentStartTimeout
	}
	if cfg.TerminalTimeout == 0 {
		cfg.TerminalTimeout = DefaultAgentTerminalTimeout
	}
	if cfg.MaxCalls == 0 {
		cfg.MaxCalls = DefaultAgentMaxCalls
	}
	return &ACP{name: n, cfg: cfg}, nil
}
