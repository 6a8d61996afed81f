package acphost

import (
	"context"
	"encoding/json"

	"albedo/hub/provider"
	"albedo/wire"
)

// Turn is one prompt of a session's agent: what it is asked, where it
// works, and where what it does goes.
type Turn struct {
	Session   string
	Profile   string // the acp profile's name
	Config    provider.AgentConfig
	Workspace string // an existing directory: the agent's cwd, and all it may read or write through the daemon
	Input     string // the person's message
	// Resume is the agent's session id its last process held for this
	// session under Profile ("" for none): a new process loads it where
	// the agent can.
	Resume string
	// Note is told the agent before Input (a turn it lost when the daemon
	// stopped); "" for nothing.
	Note string
	// Transcript is the session's conversation before Input, told an
	// agent that starts without its own memory of it.
	Transcript []provider.Message
	Sink       Sink
}

// How an agent's session began for a turn (Sink.Opened).
const (
	OpenedNew    = "new"    // the session's first: nothing to remember
	OpenedLoaded = "loaded" // session/load resumed the agent's own session
	OpenedAnew   = "anew"   // a new agent session, told the transcript: the agent could not load its own
)

// Sink is where a turn's doings go: the hub's seam, which commits calls
// and results to the log, streams text, and asks people. Its methods are
// called from the agent's connection's goroutines, the text ones in the
// order the agent sent them.
type Sink interface {
	// Opened says the agent session a new process holds for the turn,
	// and how it began; reason says why one was not loaded.
	Opened(ctx context.Context, agentSession, how, reason string) error
	// Text streams a piece of the reply; Thought one of the agent's
	// thinking, which is not committed.
	Text(delta string)
	Thought(delta string)
	// Plan is the agent's plan, whole, bounded.
	Plan(entries []wire.PlanEntry)
	// Output is the output so far (its newest bytes) of a command that
	// runs for call id.
	Output(id, tail string)
	// Usage is what the turn cost, as the agent says.
	Usage(u wire.Usage)
	// Call commits a call the agent runs on its own (no permission
	// asked): its tool_call event, with policy agent.
	Call(ctx context.Context, c Call) error
	// Propose commits a call that needs a decision: the daemon's policy
	// for c.Tool decides (def when no rule matches; allow_session
	// remembered), and a call that asks waits for Await. It returns the
	// policy's decision, "" when people decide.
	Propose(ctx context.Context, c Call, def string) (string, error)
	// Await waits for the decision on a proposed call: allow,
	// allow_session, deny (with why: who denied it), or expired or
	// cancelled, whose result it commits.
	Await(ctx context.Context, id string) (decision, why string, err error)
	// Result commits a call's end; one already ended is left as it is.
	Result(ctx context.Context, r Result) error
	// Note commits a notice about call id (how the agent was answered).
	Note(ctx context.Context, id, text string) error
}

// Call is one of the agent's calls as the log keeps it.
type Call struct {
	ID        string // albedo's call id
	Tool      string // acp:KIND, acp:fs_write, acp:terminal
	Title     string
	Arguments json.RawMessage // a JSON object
	Locations []wire.ToolLocation
	Diff      string // unified, bounded
	// Again says the call is in the log already, committed as the agent's
	// own, and now asks for permission: its row waits for a decision, and
	// a tool_call event says so again.
	Again bool
}

// Result is how one of the agent's calls ended.
type Result struct {
	ID                   string
	State, Output, Error string
	Diff                 string
}

// Tool names of the agent's calls: acp:KIND for the agent's own (KIND
// as it says: read, edit, execute, …), and the two the daemon runs for
// it.
const (
	ToolPrefix   = "acp:"
	ToolFSWrite  = "acp:fs_write"
	ToolTerminal = "acp:terminal"
)
