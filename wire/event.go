package wire

import (
	"encoding/json"
	"time"
)

// EventType is the kind of an event of the durable log.
type EventType string

// Event types.
const (
	EventMessage  EventType = "message"
	EventTurn     EventType = "turn"
	EventSettings EventType = "settings"
	// EventCompaction is a summary that stands, in what a provider is
	// sent, for the messages at offsets From..To (docs/protocol.md,
	// "Compaction").
	EventCompaction EventType = "compaction"
	// EventToolCall is a model's call of a tool, with the policy that
	// decided it (docs/protocol.md, "Tool calls").
	EventToolCall EventType = "tool_call"
	// EventApproval is a person's decision on a call that asked.
	EventApproval EventType = "approval"
	// EventToolResult is what a call came to: its output, or why none.
	EventToolResult EventType = "tool_result"
	// EventNotice is the daemon's word to the people reading, in the
	// log: a coding agent started anew, how an agent's permission
	// request was answered (with the call's CallID).
	EventNotice EventType = "notice"
)

// Tool calls' policies and decisions (tool_call's policy, approval's
// decision).
const (
	PolicyAllow = "allow"
	PolicyAsk   = "ask"
	PolicyDeny  = "deny"
	// PolicyAgent is a coding agent's call it ran on its own: it asked
	// no permission, so nothing decided it.
	PolicyAgent          = "agent"
	DecisionAllow        = "allow"
	DecisionAllowSession = "allow_session" // this tool runs without asking for the rest of the session
	DecisionDeny         = "deny"
)

// Tool results' states.
const (
	ToolCompleted = "completed"
	ToolFailed    = "failed"
	ToolDenied    = "denied"
	ToolCancelled = "cancelled" // an interrupt ended its turn first
	ToolExpired   = "expired"   // no one decided in time
)

// Message states.
const (
	MessageComplete    = "complete"
	MessageInterrupted = "interrupted"
	MessageFailed      = "failed"
)

// Turn states, also used as the status field last_turn.
const (
	TurnStarted     = "started"
	TurnCompleted   = "completed"
	TurnInterrupted = "interrupted"
	TurnFailed      = "failed"
)

// Reasons a turn was interrupted.
const (
	ReasonUser           = "user"
	ReasonDaemonShutdown = "daemon_shutdown"
	ReasonDaemonRestart  = "daemon_restart"
	// ReasonFork closes, in a fork, a turn its fork point is inside of.
	ReasonFork = "fork"
	// ReasonImport closes, in a session restored from an export, a turn
	// the export left started.
	ReasonImport = "import"
)

// Author is who wrote an input: the name and id its message carries
// (Event.Author, Event.AuthorID).
type Author struct {
	Name string
	ID   string
}

// Event is one entry of a session's durable log. Offset and At are assigned
// by the database writer at commit; the other fields depend on Type.
//
// Settings fields are pointers because an empty string is meaningful there:
// an effort of "" means "cleared", which differs from "not changed".
type Event struct {
	Offset int64     `json:"offset"`
	Type   EventType `json:"type"`
	At     time.Time `json:"at"`

	// message
	Role   Role   `json:"role,omitempty"`
	Author string `json:"author,omitempty"` // who wrote it: a person's name, a bot's, a model's
	// AuthorID names the author of an input for good: a member's id,
	// "bot:NAME", "guest:…", or "token:NAME" for an owner token with no
	// member. A name may come again (a member removed, another added);
	// an id does not.
	AuthorID string `json:"author_id,omitempty"`
	Text     string `json:"text,omitempty"`
	// message and turn
	InputID string `json:"input_id,omitempty"`
	TurnID  string `json:"turn_id,omitempty"`
	State   string `json:"state,omitempty"`
	// turn
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
	// Usage is a closing turn event's token usage (SetUsage, TurnUsage):
	// an object, or null when the provider reported none.
	Usage json.RawMessage `json:"usage,omitempty"`
	// Context is a closing turn event's count of the context its model
	// was sent and answered with, in tokens, as the daemon counts it for
	// compaction (docs/protocol.md, "Compaction"); 0 (absent) for a
	// provider with no window.
	Context int `json:"context,omitempty"`

	// compaction: the messages it stands for (Text is the summary,
	// Author who wrote it, By who asked)
	From int64 `json:"from,omitempty"`
	To   int64 `json:"to,omitempty"`

	// settings
	Title  *string `json:"title,omitempty"`
	Model  *string `json:"model,omitempty"`
	Effort *string `json:"effort,omitempty"`
	System *string `json:"system,omitempty"`
	Tools  *string `json:"tools,omitempty"` // all or none
	// Participants and Respond: who else answers in the session, and
	// when anyone does (wire/participants.go)
	Participants *[]string `json:"participants,omitempty"`
	Respond      *string   `json:"respond,omitempty"`
	Archived     *bool     `json:"archived,omitempty"`
	Temperature  *float64  `json:"temperature,omitempty"` // -1: none, the provider's own
	By           string    `json:"by,omitempty"`

	// tool_call, approval, tool_result (with TurnID; a tool_call's Text
	// is what the model said before its calls, on the first call of a
	// step; a tool_result's Text is the tool's output, State its end,
	// Error why it failed; an approval's Reason is the decider's)
	CallID string `json:"call_id,omitempty"`
	Tool   string `json:"tool,omitempty"` // the full name: bot:BOT/TOOL, mcp:SERVER/TOOL
	// Arguments is a tool_call's JSON arguments, compact as
	// json.Marshal writes them (CompactJSON).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Policy    string          `json:"policy,omitempty"`
	Decision  string          `json:"decision,omitempty"`
	// A coding agent's call (tool acp:KIND; wire/agents.go): the files
	// it is about, on its tool_call, and the change it proposes or made
	// as a unified diff, on its tool_call or tool_result. Its Title is
	// the agent's title of the call.
	Locations []ToolLocation `json:"locations,omitempty"`
	Diff      string         `json:"diff,omitempty"`

	// message and tool_result: the files it carries (wire/blobs.go)
	Attachments []Attachment `json:"attachments,omitempty"`

	// message: the offset of the reply it continues, one cut off (POST
	// /v1/sessions/{id}/continue); shown as that reply's rest.
	Continues int64 `json:"continues,omitempty"`
}
