package peer

import (
	"encoding/json"
	"fmt"
	"time"

	"albedo/db"
	"albedo/wire"
)

// Kind names a kind of notice. On NATS it is the last part of the
// subject the notice goes on, so these strings are what nodes of
// different versions agree on: never rename one.
type Kind string

const (
	KindEvents   Kind = "ev"       // Events: a commit's events
	KindText     Kind = "text"     // Text: a running turn's reply, from its node
	KindStatus   Kind = "status"   // Status: a session's run state, from the node running it
	KindPresence Kind = "presence" // Presence: a node's viewers of a session
	KindRepeat   Kind = "repeat"   // Repeat: a node's viewers of many sessions, again
	KindChanges  Kind = "changes"  // Changes: the store has new changes to who may do what
	KindBots     Kind = "bots"     // Bots: the bots a node serves
	KindBotReply Kind = "botreply" // BotReply: a remote bot's answer, to the turn's node
)

// Kinds are the kinds a bus carries, in no particular order.
var Kinds = []Kind{KindEvents, KindText, KindStatus, KindPresence, KindRepeat, KindChanges, KindBots, KindBotReply}

// RequestSubject is the last part of the NATS subject that requests (Ask)
// go on.
const RequestSubject = "req"

// A Notice is what one node tells the others. Its JSON is what crosses
// the bus.
type Notice interface {
	Kind() Kind
}

// MaxCommitEvents is the most bytes of events an Events notice carries; a
// commit larger than this is announced by its offsets only, and nodes
// read the events from the store.
const MaxCommitEvents = 64 << 10

// Commit is the notice of a commit as its node sends it: the events as
// the store's writer made them. It goes on the bus as Events.
type Commit struct {
	Node    string
	Session string
	Epoch   string    // the session's (db.Committed.Epoch)
	At      time.Time // when it was committed
	Events  []db.Event
}

func (Commit) Kind() Kind { return KindEvents }

// MarshalJSON writes the commit as the Events that other nodes read.
func (c Commit) MarshalJSON() ([]byte, error) { return json.Marshal(c.AsEvents()) }

// AsEvents is the commit as other nodes read it: its events themselves
// when they fit in MaxCommitEvents, else their offsets only.
func (c Commit) AsEvents() Events {
	n := Events{Node: c.Node, Session: c.Session, Epoch: c.Epoch, At: c.At.UnixNano()}
	if len(c.Events) == 0 {
		return n
	}
	n.First, n.Last = c.Events[0].Offset, c.Events[len(c.Events)-1].Offset
	size := 0
	for _, e := range c.Events {
		size += len(e.JSON)
	}
	if size > MaxCommitEvents {
		return n
	}
	n.Events = make([]json.RawMessage, len(c.Events))
	n.Kinds = make([]EventKind, len(c.Events))
	for i, e := range c.Events {
		n.Events[i] = e.JSON
		n.Kinds[i] = EventKind{Type: e.Type, Role: e.Meta.Role, InputID: e.Meta.InputID, TurnID: e.Meta.TurnID, State: e.Meta.State}
	}
	return n
}

// Events is a commit's events, as a node receives them.
type Events struct {
	Node    string `json:"node"`
	Session string `json:"session"`
	// Epoch is the session's: a node whose channel has another serves a
	// session deleted since, and must not hand its viewers these events.
	// Empty from a node that sends none.
	Epoch  string            `json:"epoch,omitempty"`
	First  int64             `json:"first"`
	Last   int64             `json:"last"`
	At     int64             `json:"at"`               // when it was committed, Unix nanoseconds
	Events []json.RawMessage `json:"events,omitempty"` // First..Last, when they fit
	// Kinds are the events' types and what drives turns, beside them, so
	// that a node reads none of them twice.
	Kinds []EventKind `json:"kinds,omitempty"`
}

func (Events) Kind() Kind { return KindEvents }

// EventKind is what a node needs of an event besides its JSON: db.Meta
// without the text, as the node that committed it set it.
type EventKind struct {
	Type    wire.EventType `json:"t"`
	Role    wire.Role      `json:"r,omitempty"`
	InputID string         `json:"i,omitempty"`
	TurnID  string         `json:"u,omitempty"`
	State   string         `json:"s,omitempty"`
}

// Meta is the event's db.Meta, as Append set it on the node that
// committed it.
func (k EventKind) Meta() db.Meta {
	return db.Meta{Role: k.Role, InputID: k.InputID, TurnID: k.TurnID, State: k.State}
}

// Text is a piece of a running turn's reply.
type Text struct {
	Node    string `json:"node"`
	Session string `json:"session"`
	Turn    string `json:"turn"`
	Pos     int    `json:"pos"`            // bytes of the reply before Text
	Text    string `json:"text"`           // a delta, or the whole reply so far (Full)
	Full    bool   `json:"full,omitempty"` // Text replaces what came before
	// Restart, with Full and no Text: the reply starts over (a bot's
	// connection dropped). Any other whole text that is a prefix of what
	// a node shows is older than what it shows, and changes nothing.
	Restart bool `json:"restart,omitempty"`
}

func (Text) Kind() Kind { return KindText }

// Status is a session's run state, from the node running its turns.
type Status struct {
	Node     string     `json:"node"`
	Session  string     `json:"session"`
	Phase    wire.Phase `json:"phase"`
	TurnID   string     `json:"turn_id,omitempty"`
	Queued   int        `json:"queued"`
	LastTurn *string    `json:"last_turn,omitempty"`
	Pending  int        `json:"pending,omitempty"` // calls waiting for a decision
	// Agent is what the session's coding agent is doing.
	Agent *wire.AgentStatus `json:"agent,omitempty"`
}

func (Status) Kind() Kind { return KindStatus }

// Presence is a node's viewers of a session: its first people (as a
// presence push lists them), how many people and connections it has.
type Presence struct {
	Node    string        `json:"node,omitempty"` // in a Repeat, the Repeat's
	Session string        `json:"session"`
	People  []wire.Person `json:"people"`
	Total   int           `json:"total"`
	Viewers int           `json:"viewers"`
}

func (Presence) Kind() Kind { return KindPresence }

// Repeat is a node's viewers of many sessions, said again at a heartbeat:
// one message for up to RepeatBatch sessions, where a notice each made a
// node with thousands of sessions watched send thousands of messages
// every heartbeat, and every other node receive them all.
type Repeat struct {
	Node     string     `json:"node"`
	Sessions []Presence `json:"sessions"`
}

func (Repeat) Kind() Kind { return KindRepeat }

// RepeatBatch bounds the sessions of one Repeat: at most about 64 KiB
// with a session's first people listed.
const RepeatBatch = 256

// Changes rings the other nodes to read the store's changes now: the
// changes themselves are only in the store.
type Changes struct {
	Node string `json:"node"`
}

func (Changes) Kind() Kind { return KindChanges }

// Bots are the bots a node serves.
type Bots struct {
	Node string         `json:"node"`
	Bots map[string]int `json:"bots"` // name → serving connections
	// Tools are the tools bots serve from the node: name → the newest
	// declaration of its connections there.
	Tools map[string][]wire.ToolSpec `json:"tools,omitempty"`
}

func (Bots) Kind() Kind { return KindBots }

// BotReply is a remote bot's answer, sent to the node running the turn,
// or that node's word that the bot's end of it is committed.
type BotReply struct {
	To   string `json:"to"`
	Turn string `json:"turn"`
	Text string `json:"text,omitempty"`
	// Attachments are files the reply carries, resolved on the bot's node.
	Attachments []wire.Attachment `json:"attachments,omitempty"`
	Done        bool              `json:"done,omitempty"`
	Error       string            `json:"error,omitempty"`
	Lost        bool              `json:"lost,omitempty"`
	// Ack, with Done or Error: the bot waits to hear that the end is
	// committed. Committed, from the turn's node: it is (Error empty),
	// or could not be (Error says why).
	Ack       bool `json:"ack,omitempty"`
	Committed bool `json:"committed,omitempty"`
}

func (BotReply) Kind() Kind { return KindBotReply }

// Ops of a Request.
const (
	OpInterrupt = "interrupt"  // interrupt the session's running turn
	OpBotTurn   = "bot-turn"   // hand a turn to a bot connected there (Body: BotTurn)
	OpBotCancel = "bot-cancel" // cancel a turn handed over (Body: BotTurn)
	OpBotCheck  = "bot-check"  // does it still serve the turn? (Body: BotTurn)
	OpToolCall  = "tool-call"  // run a call on a bot's connection there and answer its result (Body: ToolCall)
)

// ToolCall is the body of an OpToolCall request: the call, for a
// connection of Bot, to be answered within TimeoutMS.
type ToolCall struct {
	Bot       string        `json:"bot"`
	Push      wire.ToolPush `json:"push"`
	TimeoutMS int64         `json:"timeout_ms"`
}

// Request asks one node (To) to do something; the other nodes ignore it.
type Request struct {
	To      string          `json:"to"`
	Op      string          `json:"op"`
	Session string          `json:"session"`
	Reason  string          `json:"reason,omitempty"`
	Body    json.RawMessage `json:"body,omitempty"`
}

// Response is a node's answer to a Request. Error, when set, is the
// answering node's own.
type Response struct {
	Turn    string      `json:"turn,omitempty"`
	Running bool        `json:"running"`
	Error   *wire.Error `json:"error,omitempty"`
	// A tool call's: its output, and why it failed; lost when the node
	// has no connection of the bot now (the asker picks again).
	Output    string `json:"output,omitempty"`
	ToolError string `json:"tool_error,omitempty"`
	ToolLost  bool   `json:"tool_lost,omitempty"`
	// ToolFiles are the files the result carries (blobs of the shared
	// store).
	ToolFiles []wire.Attachment `json:"tool_files,omitempty"`
}

// BotTurn is the body of the bot ops' requests.
type BotTurn struct {
	Bot      string             `json:"bot"`
	From     string             `json:"from"`
	Session  string             `json:"session"`
	Turn     string             `json:"turn"`
	Input    string             `json:"input"`
	Messages []wire.TurnMessage `json:"messages"`
	Earlier  bool               `json:"earlier,omitempty"`
}

// Encode is n as it goes on a bus, for Decode to read. A Commit is
// written as the Events other nodes read, directly: json.Marshal of a
// Commit would check and copy again all that its MarshalJSON wrote, on
// every commit.
func Encode(n Notice) ([]byte, error) {
	if c, ok := n.(Commit); ok {
		return json.Marshal(c.AsEvents())
	}
	return json.Marshal(n)
}

// Decode reads a notice of kind k. A Commit is read as Events.
func Decode(k Kind, data []byte) (Notice, error) {
	var n Notice
	var err error
	switch k {
	case KindEvents:
		n, err = decode[Events](data)
	case KindText:
		n, err = decode[Text](data)
	case KindStatus:
		n, err = decode[Status](data)
	case KindPresence:
		n, err = decode[Presence](data)
	case KindRepeat:
		n, err = decode[Repeat](data)
	case KindChanges:
		n, err = decode[Changes](data)
	case KindBots:
		n, err = decode[Bots](data)
	case KindBotReply:
		n, err = decode[BotReply](data)
	default:
		return nil, fmt.Errorf("no notice of kind %q", k)
	}
	if err != nil {
		return nil, fmt.Errorf("a %s notice: %w", k, err)
	}
	return n, nil
}

func decode[T Notice](data []byte) (Notice, error) {
	var n T
	if err := json.Unmarshal(data, &n); err != nil {
		return nil, err
	}
	return n, nil
}
