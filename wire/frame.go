package wire

// Op names a websocket frame: a command (client → server) or a push
// (server → client). A reply to a command has no op; it carries the
// command's id.
type Op string

// Commands (client → server).
const (
	OpHello     Op = "hello"
	OpSub       Op = "sub"
	OpUnsub     Op = "unsub"
	OpWatch     Op = "watch"
	OpSend      Op = "send"
	OpInterrupt Op = "interrupt"
	OpPing      Op = "ping"
	OpPost      Op = "post"
	OpServe     Op = "serve"
	OpReply     Op = "reply"
	OpProve     Op = "prove"  // before hello: the daemon proves it holds the link's key (docs/security.md)
	OpPeople    Op = "people" // a page of who watches a session, past what presence lists
	OpTyping    Op = "typing" // the sender's draft in a session changed (presence shows it)
)

// Pushes (server → client).
const (
	PushEvent    Op = "event"
	PushReset    Op = "reset"
	PushPartial  Op = "partial"
	PushDelta    Op = "delta"
	PushStatus   Op = "status"
	PushPresence Op = "presence"
	PushBye      Op = "bye"
	PushTurn     Op = "turn"
	PushRead     Op = "read"     // the connection's person read a session up to an offset, on this device or another"
	PushSessions Op = "sessions" // the list of sessions changed: list again (hello's sessions)
)

// Reasons of a reset push and of bye.
const (
	ResetNew     = "new"      // a sub without a cursor
	ResetEpoch   = "epoch"    // the cursor's epoch is not the session's
	ResetAhead   = "ahead"    // the cursor is beyond the head
	ResetDeleted = "deleted"  // the session was deleted; the subscription ends
	ResetRevoked = "revoked"  // the connection's access to the session was taken back; the subscription ends
	ByeShutdown  = "shutdown" // closes with 1001
	ByeRestart   = "restart"  // closes with 1012
	ByeDrain     = "drain"    // closes with 1012: the node is leaving; reconnect at once (through the balancer, to another)
)

// CloseBadToken is the websocket close code of a connection whose token is
// wrong or was revoked.
const CloseBadToken = 4401

// Defaults and limits of the websocket.
const (
	DefaultWindow = 100       // events sent after a reset when sub says no window
	MaxFrameBytes = 1 << 20   // default websocket frame limit (close 1009)
	MaxInputBytes = 256 << 10 // default input text limit (too_large)
	MaxChannels   = 10000     // default channels per connection (too_many)
	HeartbeatMS   = 15000     // default server ping interval
	// MaxClientBytes bounds hello's client, a device label (bad_request
	// past it): presence repeats it to every watcher.
	MaxClientBytes = 64
)

// A hello may ride in the upgrade's request (docs/protocol.md, "Hello in
// the upgrade"): HelloHeader holds the hello command's JSON, base64url
// without padding, at most MaxHelloHeader bytes. A daemon that takes it
// answers the 101 with HelloHeader: HelloTaken, and the hello's reply is
// the connection's first message, in the same write as the 101; the
// client sends no hello frame. A client that finds no HelloTaken in the
// 101 says hello in a frame, as before.
const (
	HelloHeader    = "Albedo-Hello"
	HelloTaken     = "taken"
	MaxHelloHeader = 8 << 10
)

// Command is one client → server frame: {"id":N,"op":"…",…}.
type Command struct {
	ID int64 `json:"id"`
	Op Op    `json:"op"`

	// hello
	Token  string `json:"token,omitempty"`
	Client string `json:"client,omitempty"`
	Name   string `json:"name,omitempty"` // a guest's name of their choosing (write links)
	// prove
	Nonce string `json:"nonce,omitempty"`
	Subs  []Sub  `json:"subs,omitempty"`
	// Sessions asks for a sessions push whenever a session is made or
	// deleted (owner tokens; others are not told).
	Sessions bool `json:"sessions,omitempty"`

	// sub, unsub, send, interrupt, post
	Session string `json:"session,omitempty"`
	After   *int64 `json:"after,omitempty"`
	Epoch   string `json:"epoch,omitempty"`
	Window  *int   `json:"window,omitempty"`
	Watch   *bool  `json:"watch,omitempty"` // sub, watch
	InputID string `json:"input_id,omitempty"`
	Text    string `json:"text,omitempty"`
	// send, post, reply, tool_result: files the message (the reply, the
	// result) carries (wire.Input.Attachments)
	Attachments []Attachment `json:"attachments,omitempty"`

	// feed, feed_page
	Pos    string `json:"pos,omitempty"`    // feed: resume after this position
	Limit  int    `json:"limit,omitempty"`  // feed, feed_page: sessions in the page
	Cursor string `json:"cursor,omitempty"` // feed_page: the next of a page before

	// reply (bots)
	TurnID string `json:"turn_id,omitempty"`
	Done   bool   `json:"done,omitempty"`
	Error  string `json:"error,omitempty"`

	// serve (bots): the tools it serves; Turns false serves tools only
	Tools []ToolSpec `json:"tools,omitempty"`
	Turns *bool      `json:"turns,omitempty"`
	// tool_result (bots; with Error), approve (with Session)
	CallID   string `json:"call_id,omitempty"`
	Output   string `json:"output,omitempty"`
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// Sub is the body of a sub command, also one item of hello's subs.
type Sub struct {
	Session string `json:"session"`
	After   *int64 `json:"after,omitempty"`
	Epoch   string `json:"epoch,omitempty"`
	Window  *int   `json:"window,omitempty"`
	// Watch false subscribes in the background: everything is sent, but
	// the connection is not one of the session's viewers (status count,
	// presence list). Absent is true.
	Watch *bool `json:"watch,omitempty"`
}

// Reply answers one command. OK is always present; the other fields depend
// on the op and are omitted when they do not apply.
type Reply struct {
	ID    int64  `json:"id"`
	OK    bool   `json:"ok"`
	Error *Error `json:"error,omitempty"`

	// hello
	Conn        string    `json:"conn,omitempty"`
	Boot        string    `json:"boot,omitempty"`
	Version     string    `json:"version,omitempty"`
	HeartbeatMS int64     `json:"heartbeat_ms,omitempty"`
	Role        TokenRole `json:"role,omitempty"` // of the token: what the client may do
	// You is who the token writes as (hello): its name and author id, as
	// its messages carry them, and its role (Devices is not counted).
	You      *Person    `json:"you,omitempty"`
	Subs     []SubReply `json:"subs,omitempty"`
	Sessions bool       `json:"sessions,omitempty"` // sessions pushes will come
	// SessionToken is a bearer for HTTP calls made for this connection,
	// good until this daemon stops: a page sends it, not its own token,
	// with its requests (docs/security.md).
	SessionToken string `json:"session_token,omitempty"`

	// prove
	Proof string `json:"proof,omitempty"`

	// people: a page, and where the next one starts (0: none)
	People []Person `json:"people,omitempty"`
	Next   int64    `json:"next,omitempty"`

	// sub (inline), send, interrupt
	*SubReply
	Receipt     *Receipt `json:"receipt,omitempty"`
	Interrupted *bool    `json:"interrupted,omitempty"`
	TurnID      string   `json:"turn_id,omitempty"`

	// approve: the committed approval event
	Event *Event `json:"event,omitempty"`

	// feed, feed_page
	Feed *FeedReply `json:"feed,omitempty"`
}

// Sub returns the reply to a sub command as the SubReply it carries inline:
// the reply's own OK and Error shadow those of the embedded SubReply in
// JSON, so they are copied in here. session names the sub when the reply
// (an error) does not.
func (r *Reply) Sub(session string) SubReply {
	var s SubReply
	if r.SubReply != nil {
		s = *r.SubReply
	}
	if s.Session == "" {
		s.Session = session
	}
	s.OK, s.Error = r.OK, r.Error
	return s
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

// Nonce bounds of a prove command.
const (
	MinNonce = 16
	MaxNonce = 128
)

// ProofContext is what the daemon's proof covers besides the nonce: the
// proof is hex(HMAC-SHA256(key, ProofContext + nonce)).
const ProofContext = "albedo-prove-v1:"
