package wire

import (
	"slices"
	"time"
)

// Phase is what a session's turn runner is doing.
type Phase string

// Session phases.
const (
	PhaseIdle    Phase = "idle"
	PhaseRunning Phase = "running"
	PhaseWaiting Phase = "waiting" // a bot turn that no bot serves yet
)

// Session is the body of session create, get and patch replies and one item
// of a session list.
type Session struct {
	ID        string `json:"id"`
	Epoch     string `json:"epoch"`
	Title     string `json:"title"`
	Workspace string `json:"workspace"`
	// Provider is the provider the session was made with; "" is none
	// named, which the daemon's default_provider serves.
	Provider string `json:"provider"`
	// ResolvedProvider is the provider a turn of the session would use
	// now: Provider, else the answering daemon's default_provider, else
	// echo. Clients show it rather than guess the default, which
	// config.toml sets.
	ResolvedProvider string `json:"resolved_provider"`
	Model            string `json:"model"`
	// ResolvedModel is the model a turn would go to now: Model, else the
	// resolved provider's default_model; "" where neither names one (echo,
	// a bot, a coding agent).
	ResolvedModel string `json:"resolved_model,omitempty"`
	Effort        string `json:"effort"`
	// System is the session's own system text, sent to its provider
	// before the transcript ("": the profile's default, if any).
	System string `json:"system"`
	// Tools is what the session offers its models: "all" the tools
	// served to it, or "none".
	Tools string `json:"tools"`
	// Participants are who answers besides Provider, each a provider
	// profile's name or "bot:NAME"; Respond is when anyone does:
	// RespondAlways or RespondMentions (wire/participants.go).
	Participants []string `json:"participants"`
	Respond      string   `json:"respond"`
	// Archived keeps it out of the clients' lists and the feed; search
	// still finds it (PATCH {"archived":…}).
	Archived bool `json:"archived,omitempty"`
	// Temperature is sent to its provider (0–2); absent: none chosen,
	// the provider's own.
	Temperature *float64  `json:"temperature,omitempty"`
	Phase       Phase     `json:"phase"`
	Head        int64     `json:"head"`
	ETag        string    `json:"etag"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	// Access is what the caller may do in it: creator (an admin's
	// everywhere), write or read.
	Access Access `json:"access,omitempty"`
	// Parent is where a fork came from; nil for a session that is no
	// fork. It stays when the parent is deleted.
	Parent *ForkPoint `json:"parent,omitempty"`
	// ContextTokens is the context window of the model its turns go to
	// now, in tokens; 0 (absent) for a provider with none (echo, a bot).
	ContextTokens int `json:"context_tokens,omitempty"`
	// Usage is what its turns and compactions took and cost so far (Key
	// is its id); only GET /v1/sessions/{id} gives it.
	Usage *UsageTotal `json:"usage,omitempty"`
}

// ForkPoint is a point of a session's log: a fork's history is its
// parent's events 1..Offset.
type ForkPoint struct {
	Session string `json:"session"`
	Offset  int64  `json:"offset"`
}

// ForkRequest is the body of POST /v1/sessions/{id}/fork.
type ForkRequest struct {
	// At is the offset of the parent's last event in the fork (at most
	// the parent's head; 0: none of them, a fresh start with its
	// settings).
	At    int64  `json:"at"`
	Title string `json:"title,omitempty"`
	// Rerun runs the turn of an input again in the fork: At names the
	// input's user message, or an assistant message, whose input is then
	// the one re-run (the fork ends at that input's message).
	Rerun bool `json:"rerun,omitempty"`
}

// ForkList is the body of GET /v1/sessions/{id}/forks: the forks of a
// session the caller may see, by fork point and then age.
type ForkList struct {
	Forks []Session `json:"forks"`
}

// SessionList is the body of GET /v1/sessions: one page of the list. Next,
// when set, is the cursor that reads the page after it (?after=).
type SessionList struct {
	Sessions []Session `json:"sessions"`
	Next     string    `json:"next,omitempty"`
}

// SessionCreate is the body of POST /v1/sessions and PUT /v1/sessions/{id}.
// Every field is optional.
type SessionCreate struct {
	Title     string `json:"title,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	Provider  string `json:"provider,omitempty"`
	Model     string `json:"model,omitempty"`
	Effort    string `json:"effort,omitempty"`
	// System is the session's system text (SessionPatch.System), at most
	// MaxSystemBytes: an import restores it.
	System string `json:"system,omitempty"`
}

// SessionPatch is the body of PATCH /v1/sessions/{id}. A nil field is left
// alone; a non-nil empty Effort clears the effort.
type SessionPatch struct {
	Title  *string `json:"title,omitempty"`
	Model  *string `json:"model,omitempty"`
	Effort *string `json:"effort,omitempty"`
	System *string `json:"system,omitempty"` // at most MaxSystemBytes
	// Tools is "all" (every tool served to the session is offered to
	// its models) or "none".
	Tools *string `json:"tools,omitempty"`
	// Participants replaces the session's participants (at most
	// MaxParticipants; [] clears them); Respond is RespondAlways or
	// RespondMentions.
	Participants *[]string `json:"participants,omitempty"`
	Respond      *string   `json:"respond,omitempty"`
	// Archived takes the session out of the lists and the feed (true) or
	// brings it back (false).
	Archived *bool `json:"archived,omitempty"`
	// Temperature sets the temperature sent to its provider (0 to 2); -1
	// gives it back to the provider's own.
	Temperature *float64 `json:"temperature,omitempty"`
}

// What a session offers its models (Session.Tools, SessionPatch.Tools).
const (
	ToolsAll  = "all"
	ToolsNone = "none"
)

// MaxSystemBytes bounds a session's system text (too_large past it).
const MaxSystemBytes = 32 << 10

// The byte limits of the short text fields a client sets (too_large past
// one, naming the field and its limit): a session's title, workspace,
// model and provider, and the names an event records. Each bounds what
// every list, feed page and status push repeats of it.
const (
	MaxTitleBytes     = 512
	MaxWorkspaceBytes = 4096
	MaxModelBytes     = 256
	MaxNameBytes      = 256 // a provider's name, an author's, an id an event records
)

// Efforts are the reasoning efforts a session may have, in rising order:
// the values OpenAI's reasoning_effort takes. The empty effort is none
// set: the request carries no reasoning_effort at all.
var Efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}

// ValidEffort says whether e is one of Efforts or empty.
func ValidEffort(e string) bool { return e == "" || slices.Contains(Efforts, e) }

// Page is a history page: GET /v1/sessions/{id}/events.
type Page struct {
	Events []Event `json:"events"`
	Head   int64   `json:"head"`
	More   bool    `json:"more"`
}

// Status is the run state of a session: GET /v1/sessions/{id}/status.
type Status struct {
	Phase    Phase   `json:"phase"`
	TurnID   string  `json:"turn_id"`
	Queued   int     `json:"queued"`
	LastTurn *string `json:"last_turn"`
	Head     int64   `json:"head"`
	Viewers  int     `json:"viewers"`
	// Pending counts the calls waiting for a decision (phase approval).
	Pending int `json:"pending,omitempty"`
	// Agent is what the session's coding agent is doing: its plan, its
	// thinking, a command's output (none for other providers).
	Agent *AgentStatus `json:"agent,omitempty"`
}

// Input is the body of PUT /v1/sessions/{id}/inputs/{input_id}.
type Input struct {
	Text string `json:"text"`
	// Attachments are files the message carries, each a blob uploaded
	// first (PUT /v1/blobs/{sha256}): at most MaxAttachments.
	Attachments []Attachment `json:"attachments,omitempty"`
}

// Receipt states and deliveries.
const (
	ReceiptAccepted = "accepted"
	ReceiptRejected = "rejected"

	DeliveryQueued      = "queued"
	DeliveryRunning     = "running"
	DeliveryDone        = "done"
	DeliveryInterrupted = "interrupted"
	DeliveryFailed      = "failed"
)

// Receipt acknowledges an input. The same input_id always yields the same
// receipt (its delivery moves on as the turn runs).
type Receipt struct {
	InputID  string `json:"input_id"`
	Session  string `json:"session"`
	State    string `json:"state"`
	Order    int64  `json:"order"`
	Delivery string `json:"delivery"`
	TurnID   string `json:"turn_id"`
	Error    string `json:"error"`
}

// Continued is the reply of POST /v1/sessions/{id}/continue: the turn
// that runs on the reply that was cut off.
type Continued struct {
	TurnID string `json:"turn_id"`
}

// Interrupted is the reply to an interrupt.
type Interrupted struct {
	Interrupted bool   `json:"interrupted"`
	TurnID      string `json:"turn_id"`
}

// DaemonInfo is the content of $ALBEDO_HOME/daemon.json.
type DaemonInfo struct {
	PID  int `json:"pid"`
	Port int `json:"port"`
	// URL is the base URL a client on the machine reaches the daemon by:
	// its scheme and the address it listens on (127.0.0.1 when that is
	// every address). A file without one (an older daemon's) means
	// http://127.0.0.1:PORT.
	URL string `json:"url,omitempty"`
	// TLSCertSHA256 is, when the daemon serves TLS, the SHA-256 of the
	// certificate it serves (its leaf's DER, in hex): a client of the
	// home trusts the daemon by it, whatever names the certificate holds
	// and whoever signed it (a certificate for the server's public name
	// holds no 127.0.0.1, which URL names).
	TLSCertSHA256 string    `json:"tls_cert_sha256,omitempty"`
	Token         string    `json:"token"`
	Boot          string    `json:"boot"`
	Version       string    `json:"version"`
	StartedAt     time.Time `json:"started_at"`
}

// ProviderInfo is one provider a new session may name (GET /v1/providers):
// echo, or a [providers.NAME] table of config.toml. Bots (bot:NAME) are
// listed by GET /v1/bots.
type ProviderInfo struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`            // "echo", "openai", "anthropic", "acp" or "custom"
	Model string `json:"model,omitempty"` // the model it uses when a session names none
}

// ModelInfo is a model a provider serves: its id (what a session's model
// names) and, where the provider gives one, a name to show.
type ModelInfo struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// Models is the body of GET /v1/providers/{name}/models: the models the
// provider's API lists, and the one its profile uses by default.
type Models struct {
	Provider string      `json:"provider"`
	Default  string      `json:"default,omitempty"`
	Models   []ModelInfo `json:"models"`
}

// Providers is the body of GET /v1/providers.
type Providers struct {
	Default   string         `json:"default"` // the provider of a session that names none
	Providers []ProviderInfo `json:"providers"`
}
