package wire

// A coding agent's doings (a session whose provider is an acp profile;
// docs/agents.md): its calls' files and diffs on tool_call and
// tool_result events, and its plan, its thinking and a running command's
// output in the session's status, which are not committed.

// ToolLocation is a file an agent's call reads or changes (tool_call's
// locations), with the line it is about when the agent says.
type ToolLocation struct {
	Path string `json:"path"`
	Line *int   `json:"line,omitempty"`
}

// PlanEntry is one step of an agent's plan.
type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority,omitempty"` // high, medium, low
	Status   string `json:"status,omitempty"`   // pending, in_progress, completed
}

// AgentStatus is what a session's agent is doing, in its status: its
// plan as it last said it (kept after the turn, until the next one
// starts), the running turn's thinking so far, and the output so far of
// the command that runs now.
// Each is bounded: the newest MaxThoughtTail bytes of the thinking and
// of the output, MaxPlanEntries of MaxPlanEntryBytes.
type AgentStatus struct {
	Plan    []PlanEntry `json:"plan,omitempty"`
	Thought string      `json:"thought,omitempty"`
	// Output is the output of a command the agent runs (terminal/*),
	// with the call it belongs to.
	Output *ToolOutput `json:"output,omitempty"`
}

// ToolOutput is the output so far of a call that runs.
type ToolOutput struct {
	CallID string `json:"call_id"`
	Text   string `json:"text"`
}

// Bounds of what an agent reports.
const (
	MaxPlanEntries     = 64
	MaxPlanEntryBytes  = 1 << 10
	MaxThoughtTail     = 4 << 10
	MaxToolLocations   = 32
	MaxToolTitleBytes  = MaxTitleBytes
	MaxToolDiffBytes   = 64 << 10
	MaxToolOutputTail  = 4 << 10
	MaxLocationPathLen = 4 << 10
)

// Empty says whether a has nothing to show.
func (a AgentStatus) Empty() bool { return len(a.Plan) == 0 && a.Thought == "" && a.Output == nil }
