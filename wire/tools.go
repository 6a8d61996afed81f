package wire

import (
	"encoding/json"
	"time"
)

// Tools and approvals (docs/protocol.md, "Tool calls"): a bot serves
// tools (serve's tools), a call reaches it as a tool push and its answer
// is a tool_result command; people decide the calls that ask with
// approve, or with POST /v1/sessions/{id}/approvals/{call_id}.

// Ops of tools and approvals.
const (
	OpApprove    Op = "approve"     // a person's decision on a call that asks
	OpToolResult Op = "tool_result" // a bot's answer to a tool push
	PushTool     Op = "tool"        // a call of a tool the connection serves
)

// PhaseApproval is a turn waiting for people to decide its calls
// (Status.Pending says how many).
const PhaseApproval Phase = "approval"

// ToolSpec is one tool a bot serves (serve's tools).
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// ToolPush hands a call to a connection that serves its tool.
type ToolPush struct {
	Op        Op              `json:"op"` // "tool"
	Session   string          `json:"session"`
	TurnID    string          `json:"turn_id"`
	CallID    string          `json:"call_id"`
	Tool      string          `json:"tool"` // the tool's own name, as the bot declared it
	Arguments json.RawMessage `json:"arguments"`
}

// MaxToolOutput is where a tool's output is cut, saying so.
const MaxToolOutput = 256 << 10

// MaxToolError is where why a call failed, as its source said it, is
// cut, saying so.
const MaxToolError = 16 << 10

// Approval is one call waiting for a decision (GET …/approvals).
type Approval struct {
	CallID      string          `json:"call_id"`
	TurnID      string          `json:"turn_id"`
	Tool        string          `json:"tool"`
	Arguments   json.RawMessage `json:"arguments"`
	Offset      int64           `json:"offset"` // of its tool_call event
	RequestedAt time.Time       `json:"requested_at"`
	ExpiresAt   time.Time       `json:"expires_at"`
}

// Approvals is GET /v1/sessions/{id}/approvals.
type Approvals struct {
	Approvals []Approval `json:"approvals"`
}

// Decision is the body of POST /v1/sessions/{id}/approvals/{call_id}.
type Decision struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
}

// MaxReasonBytes bounds a decision's reason.
const MaxReasonBytes = 4 << 10

// ToolInfo is one tool in GET /v1/tools.
type ToolInfo struct {
	Name        string          `json:"name"` // the full name
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
	Policy      string          `json:"policy"` // allow, ask or deny, as the rules (and the session's allow_session) say
}

// Tools is GET /v1/tools.
type Tools struct {
	Tools []ToolInfo `json:"tools"`
	// Servers are the MCP servers the daemon hosts, with their state
	// (admins see them all; others, those offered in the session).
	Servers []MCPServer `json:"servers,omitempty"`
}

// MCPServer is one MCP server the daemon hosts ([mcp.NAME] of
// config.toml), as it is now.
type MCPServer struct {
	Name      string   `json:"name"`
	Transport string   `json:"transport"` // stdio or http
	State     string   `json:"state"`     // stopped, starting, ready or failed
	Error     string   `json:"error,omitempty"`
	Tools     int      `json:"tools"`           // as last listed
	Notes     []string `json:"notes,omitempty"` // tools it lists that are not offered, and why
}
