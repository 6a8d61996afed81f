package wire

import "encoding/json"

// Websocket ops: commands (client → server).
const (
	OpHello     = "hello"
	OpSub       = "sub"
	OpUnsub     = "unsub"
	OpSend      = "send"
	OpInterrupt = "interrupt"
	OpPing      = "ping"
	OpPost      = "post"
	OpServe     = "serve"
	OpReply     = "reply"
)

// Websocket ops: pushes (server → client).
const (
	PushEvent    = "event"
	PushReset    = "reset"
	PushPartial  = "partial"
	PushDelta    = "delta"
	PushStatus   = "status"
	PushPresence = "presence"
	PushBye      = "bye"
	PushTurn     = "turn"
)

// Reasons of a reset push and of bye.
const (
	ResetNew      = "new"      // a sub without a cursor
	ResetEpoch    = "epoch"    // the cursor's epoch is not the session's
	ResetAhead    = "ahead"    // the cursor is beyond the head
	ResetDeleted  = "deleted"  // the session was deleted; the subscription ends
	ByeShutdown   = "shutdown" // closes with 1001
	ByeRestart    = "restart"  // closes with 1012
	DefaultWindow = 100        // events sent after a reset when sub says no window
	MaxFrameBytes = 1 << 20    // default websocket frame limit (close 1009)
	MaxInputBytes = 256 << 10  // default input text limit (too_large)
	MaxChannels   = 10000      // default channels per connection (too_many)
	HeartbeatMS   = 15000      // default server ping interval
)

// Command is one client → server frame: {"id":N,"op":"…",…}.
type Command struct {
	ID int64  `json:"id"`
	Op string `json:"op"`

	// hello
	Token  string `json:"token,omitempty"`
	Client string `json:"client,omitempty"`
	Subs   []Sub  `json:"subs,omitempty"`

	// sub, unsub, send, interrupt, post
	Session string `json:"session,omitempty"`
	After   *int64 `json:"after,omitempty"`
	Epoch   string `json:"epoch,omitempty"`
	Window  *int   `json:"window,omitempty"`
	InputID string `json:"input_id,omitempty"`
	Text    string `json:"text,omitempty"`

	// reply (bots)
	TurnID string `json:"turn_id,omitempty"`
	Done   bool   `json:"done,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Sub is the body of a sub command, also one item of hello's subs.
type Sub struct {
	Session string `json:"session"`
	After   *int64 `json:"after,omitempty"`
	Epoch   string `json:"epoch,omitempty"`
	Window  *int   `json:"window,omitempty"`
}

// Reply answers one command. OK is always present; the other fields depend
// on the op and are omitted when they do not apply.
type Reply struct {
	ID    int64  `json:"id"`
	OK    bool   `json:"ok"`
	Error *Error `json:"error,omitempty"`

	// hello
	Conn        string     `json:"conn,omitempty"`
	Boot        string     `json:"boot,omitempty"`
	Version     string     `json:"version,omitempty"`
	HeartbeatMS int64      `json:"heartbeat_ms,omitempty"`
	Subs        []SubReply `json:"subs,omitempty"`

	// sub (inline), send, interrupt
	*SubReply
	Receipt     *Receipt `json:"receipt,omitempty"`
	Interrupted *bool    `json:"interrupted,omitempty"`
	TurnID      string   `json:"turn_id,omitempty"`
}

// SubReply is the reply body of one sub: the channel's cursor. In hello's
// subs, a failed sub carries OK false and Error instead.
type SubReply struct {
	Session   string `json:"session"`
	OK        bool   `json:"ok"`
	Error     *Error `json:"error,omitempty"`
	Epoch     string `json:"epoch,omitempty"`
	Head      int64  `json:"head"`
	Recovered bool   `json:"recovered"`
}

// EventPush carries one committed event.
type EventPush struct {
	Op      string `json:"op"` // "event"
	Session string `json:"session"`
	Event   *Event `json:"event"`
}

// ResetPush tells the client to drop its view of a session: events
// Before+1 … Head follow; More says older history exists.
type ResetPush struct {
	Op      string `json:"op"` // "reset"
	Session string `json:"session"`
	Epoch   string `json:"epoch"`
	Head    int64  `json:"head"`
	Before  int64  `json:"before"`
	More    bool   `json:"more"`
	Reason  string `json:"reason"`
}

// TextPush is a partial (replaces) or delta (appends) of a streaming reply.
type TextPush struct {
	Op      string `json:"op"` // "partial" or "delta"
	Session string `json:"session"`
	TurnID  string `json:"turn_id"`
	Text    string `json:"text"`
}

// StatusPush is the run state of a session.
type StatusPush struct {
	Op       string  `json:"op"` // "status"
	Session  string  `json:"session"`
	Phase    string  `json:"phase"`
	TurnID   string  `json:"turn_id"`
	Queued   int     `json:"queued"`
	LastTurn *string `json:"last_turn"`
	Model    string  `json:"model"`
	Effort   string  `json:"effort"`
	ETag     string  `json:"etag"`
	Head     int64   `json:"head"`
	Viewers  int     `json:"viewers"`
}

// Viewer is one connection watching a session.
type Viewer struct {
	Conn string `json:"conn"`
	Name string `json:"name"`
	Role string `json:"role"`
}

// PresencePush lists who watches a session.
type PresencePush struct {
	Op      string   `json:"op"` // "presence"
	Session string   `json:"session"`
	Viewers []Viewer `json:"viewers"`
}

// ByePush announces a deliberate close.
type ByePush struct {
	Op           string `json:"op"` // "bye"
	Reason       string `json:"reason"`
	RetryAfterMS int64  `json:"retry_after_ms"`
}

// TurnPush hands a turn to a bot connection that serves its provider.
type TurnPush struct {
	Op       string        `json:"op"` // "turn"
	Session  string        `json:"session"`
	TurnID   string        `json:"turn_id"`
	InputID  string        `json:"input_id"`
	Messages []TurnMessage `json:"messages"`
}

// Frame decodes any server → client frame. Replies have an ID (or OK set)
// and no Op; pushes have an Op. Viewers is a count in status and a list in
// presence, so it stays raw; use ViewerCount and ViewerList.
type Frame struct {
	ID    int64  `json:"id"`
	OK    bool   `json:"ok"`
	Op    string `json:"op"`
	Error *Error `json:"error"`

	Conn        string     `json:"conn"`
	Boot        string     `json:"boot"`
	Version     string     `json:"version"`
	HeartbeatMS int64      `json:"heartbeat_ms"`
	Subs        []SubReply `json:"subs"`
	Receipt     *Receipt   `json:"receipt"`
	Interrupted *bool      `json:"interrupted"`

	Session      string          `json:"session"`
	Epoch        string          `json:"epoch"`
	Head         int64           `json:"head"`
	Recovered    bool            `json:"recovered"`
	Event        *Event          `json:"event"`
	Before       int64           `json:"before"`
	More         bool            `json:"more"`
	Reason       string          `json:"reason"`
	TurnID       string          `json:"turn_id"`
	Text         string          `json:"text"`
	Phase        string          `json:"phase"`
	Queued       int             `json:"queued"`
	LastTurn     *string         `json:"last_turn"`
	Model        string          `json:"model"`
	Effort       string          `json:"effort"`
	ETag         string          `json:"etag"`
	Viewers      json.RawMessage `json:"viewers"`
	RetryAfterMS int64           `json:"retry_after_ms"`
	InputID      string          `json:"input_id"`
	Messages     []TurnMessage   `json:"messages"`
}

// IsReply says whether f answers a command rather than being a push.
func (f *Frame) IsReply() bool { return f.Op == "" }

// ViewerCount is the viewers field of a status push.
func (f *Frame) ViewerCount() int {
	var n int
	_ = json.Unmarshal(f.Viewers, &n)
	return n
}

// ViewerList is the viewers field of a presence push.
func (f *Frame) ViewerList() []Viewer {
	var v []Viewer
	_ = json.Unmarshal(f.Viewers, &v)
	return v
}

// TurnMessage is one entry of the transcript handed to a bot with a turn.
type TurnMessage struct {
	Role   string `json:"role"`
	Author string `json:"author"`
	Text   string `json:"text"`
}
