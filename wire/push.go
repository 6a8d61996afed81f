package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// EventPush carries one committed event.
type EventPush struct {
	Op      Op     `json:"op"` // "event"
	Session string `json:"session"`
	Event   *Event `json:"event"`
}

// ResetPush tells the client to drop its view of a session: events
// Before+1 … Head follow; More says older history exists.
type ResetPush struct {
	Op      Op     `json:"op"` // "reset"
	Session string `json:"session"`
	Epoch   string `json:"epoch"`
	Head    int64  `json:"head"`
	Before  int64  `json:"before"`
	More    bool   `json:"more"`
	Reason  string `json:"reason"`
}

// TextPush is a partial (replaces) or delta (appends) of a streaming reply.
type TextPush struct {
	Op      Op     `json:"op"` // "partial" or "delta"
	Session string `json:"session"`
	TurnID  string `json:"turn_id"`
	Text    string `json:"text"`
}

// StatusPush is the run state of a session.
type StatusPush struct {
	Op       Op      `json:"op"` // "status"
	Session  string  `json:"session"`
	Phase    Phase   `json:"phase"`
	TurnID   string  `json:"turn_id"`
	Queued   int     `json:"queued"`
	LastTurn *string `json:"last_turn"`
	Model    string  `json:"model"`
	Effort   string  `json:"effort"`
	ETag     string  `json:"etag"`
	Head     int64   `json:"head"`
	Viewers  int     `json:"viewers"`
	Pending  int     `json:"pending,omitempty"` // calls waiting for a decision
	// Agent is what the session's coding agent is doing (Status.Agent).
	Agent *AgentStatus `json:"agent,omitempty"`
}

// Person is one identity watching a session (a member, a guest, a bot, the
// viewers of a link), however many connections ("devices") it watches
// from.
type Person struct {
	ID      string    `json:"id"`   // the author id its messages carry (Event.AuthorID)
	Name    string    `json:"name"` // its token's name, never what a client says
	Role    TokenRole `json:"role"`
	Devices int       `json:"devices"`
	// Typing says its draft in this session changed in the last
	// TypingMS: a client shows it until then, unless a later push says
	// otherwise.
	Typing bool `json:"typing,omitempty"`
}

// PresencePush says who watches a session: the first MaxPresencePeople
// people, in the order they came, and how many more there are. Its size
// does not depend on the audience, nor on what clients write.
type PresencePush struct {
	Op      Op       `json:"op"` // "presence"
	Session string   `json:"session"`
	People  []Person `json:"people"`
	More    int      `json:"more"`    // people watching beyond the list
	Viewers int      `json:"viewers"` // connections watching, as status counts them
}

// Presence bounds.
const (
	MaxPresencePeople = 32   // people listed in a presence push
	TypingMS          = 5000 // how long a typing mark lasts
)

// ByePush announces a deliberate close.
type ByePush struct {
	Op           Op     `json:"op"` // "bye"
	Reason       string `json:"reason"`
	RetryAfterMS int64  `json:"retry_after_ms"`
}

// TurnPush hands a turn to a bot connection that serves its provider.
type TurnPush struct {
	Op       Op            `json:"op"` // "turn"
	Session  string        `json:"session"`
	TurnID   string        `json:"turn_id"`
	InputID  string        `json:"input_id"`
	Messages []TurnMessage `json:"messages"`
	// Earlier says older messages were left out of Messages (a bot's
	// transcript is the newest 1 000 within 512 KiB): the bot reads them
	// with GET /v1/sessions/{id}/events if it needs them.
	Earlier bool `json:"earlier,omitempty"`
}

// TurnMessage is one entry of the transcript handed to a bot with a turn.
type TurnMessage struct {
	Role   Role   `json:"role"`
	Author string `json:"author"`
	Text   string `json:"text"`
}

// FrameOp says what a server → client frame is: its op for a push, "" for
// a reply. DecodeFrame reads it first and then decodes the whole frame
// into Reply or the one push type that op names.
//
// The daemon writes a push's op as its first key, which is read without
// decoding the rest; other frames (replies among them) are decoded to find
// it.
// Either way the frame is decoded in full afterwards, so the shortcut
// never lets malformed JSON through.
func FrameOp(frame []byte) (Op, error) {
	if op, ok := leadingOp(frame); ok {
		return op, nil
	}
	var h struct {
		Op Op `json:"op"`
	}
	if err := json.Unmarshal(frame, &h); err != nil {
		return "", err
	}
	return h.Op, nil
}

// leadingOp reads `{"op":"name",` (or `}`) at the start of frame, where
// name is lower-case ASCII letters and '_' as every op is: anything else
// (escapes, other bytes) JSON might decode differently.
func leadingOp(frame []byte) (Op, bool) {
	rest, ok := bytes.CutPrefix(frame, []byte(`{"op":"`))
	if !ok {
		return "", false
	}
	i := 0
	for i < len(rest) && (rest[i] >= 'a' && rest[i] <= 'z' || rest[i] == '_') {
		i++
	}
	if i == 0 || i+1 >= len(rest) || rest[i] != '"' || (rest[i+1] != ',' && rest[i+1] != '}') {
		return "", false
	}
	return Op(rest[:i]), true
}

// Frame is any server → client frame, decoded by its op into the one type
// it is: Reply for a reply (no op), else the push that op names. Session
// is the push's session, for the pushes that have one.
type Frame struct {
	Op       Op
	Session  string
	Reply    *Reply
	Event    *Event        // event
	Reset    *ResetPush    // reset
	Text     *TextPush     // partial, delta
	Status   *StatusPush   // status
	Presence *PresencePush // presence
	Bye      *ByePush      // bye
	Turn     *TurnPush     // turn
	Read     *ReadPush     // read
	Feed     *FeedPush     // feed
	Tool     *ToolPush     // tool
}

// UnmarshalJSON decodes with DecodeFrame: json.Unmarshal into a Frame reads
// it by its op, the one way there is.
func (f *Frame) UnmarshalJSON(b []byte) error {
	d, err := DecodeFrame(b)
	if err != nil {
		return err
	}
	*f = d
	return nil
}

// IsReply says whether f answers a command rather than being a push.
func (f *Frame) IsReply() bool { return f.Reply != nil }

// DecodeFrame decodes one server → client frame. A push of an op this
// package does not know (from a newer daemon) is returned with only Op
// set, for the reader to skip.
func DecodeFrame(raw []byte) (Frame, error) {
	op, err := FrameOp(raw)
	if err != nil {
		return Frame{}, err
	}
	f := Frame{Op: op}
	switch op {
	case "":
		f.Reply = new(Reply)
		err = json.Unmarshal(raw, f.Reply)
	case PushEvent:
		var p EventPush
		err = json.Unmarshal(raw, &p)
		f.Session, f.Event = p.Session, p.Event
		if err == nil && p.Event == nil {
			err = errors.New("an event push without its event")
		}
	case PushReset:
		f.Reset = new(ResetPush)
		err = json.Unmarshal(raw, f.Reset)
		f.Session = f.Reset.Session
	case PushPartial, PushDelta:
		f.Text = new(TextPush)
		err = json.Unmarshal(raw, f.Text)
		f.Session = f.Text.Session
	case PushStatus:
		f.Status = new(StatusPush)
		err = json.Unmarshal(raw, f.Status)
		f.Session = f.Status.Session
	case PushPresence:
		f.Presence = new(PresencePush)
		err = json.Unmarshal(raw, f.Presence)
		f.Session = f.Presence.Session
	case PushBye:
		f.Bye = new(ByePush)
		err = json.Unmarshal(raw, f.Bye)
	case PushTurn:
		f.Turn = new(TurnPush)
		err = json.Unmarshal(raw, f.Turn)
		f.Session = f.Turn.Session
	case PushRead:
		f.Read = new(ReadPush)
		err = json.Unmarshal(raw, f.Read)
		f.Session = f.Read.Session
	case PushFeed:
		f.Feed = new(FeedPush)
		err = json.Unmarshal(raw, f.Feed)
	case PushTool:
		f.Tool = new(ToolPush)
		err = json.Unmarshal(raw, f.Tool)
		f.Session = f.Tool.Session
	}
	if err != nil {
		return Frame{}, fmt.Errorf("decode %q frame: %w", op, err)
	}
	return f, nil
}

// MaxPeoplePage is how many people one people reply lists.
const MaxPeoplePage = 100
