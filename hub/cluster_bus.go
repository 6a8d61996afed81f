package hub

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"albedo/db"
	"albedo/wire"
)

// The nodes of a cluster tell each other what happened over NATS core
// subjects, one per kind of notice (docs/cluster.md: "What each part
// does" says what they carry, "When a part fails" what a lost one costs).
// Core NATS delivers at most once, so nothing depends on a notice
// arriving, only how soon a node learns: every fact a notice carries is
// also in the store, where a node finds it anyway. A session's head is
// re-read at every heartbeat (cluster_heartbeat.go) and when a cursor
// asks for more than the node has seen (catchUp); a token, at its first
// use (cluster_tokens.go); a change to who may do what, within a second
// (cluster_changes.go); viewers and run state, at the other node's
// next heartbeat. A node ignores its own notices (nodeHeader).
const (
	subjEvents   = "ev"       // evNotice: a commit's events
	subjText     = "text"     // textNotice: a running turn's reply, from its node
	subjStatus   = "status"   // statusNotice: a session's run state, from the node running it
	subjPresence = "presence" // presenceNotice: a node's viewers of a session
	subjRepeat   = "repeat"   // repeatNotice: a node's viewers of many sessions, again
	subjChanges  = "changes"  // changesNotice: the store has new changes to who may do what
	subjRequest  = "req"      // request: to the node running a session's turns
)

// maxNoticeEvents is the most bytes of events a notice carries; a commit
// larger than this is announced by its offsets only, and nodes read the
// events from the store.
const maxNoticeEvents = 64 << 10

type evNotice struct {
	Node    string            `json:"node"`
	Session string            `json:"session"`
	First   int64             `json:"first"`
	Last    int64             `json:"last"`
	At      int64             `json:"at"`               // when it was committed, Unix nanoseconds
	Events  []json.RawMessage `json:"events,omitempty"` // First..Last, when they fit
	// Kinds are the events' types and what drives turns, beside them, so
	// that a node reads none of them twice (hub.metaOf).
	Kinds []eventKind `json:"kinds,omitempty"`
}

// committedAt is when the notice's commit was, for its lag (decoded).
func (n evNotice) committedAt() int64 { return n.At }

// eventKind is what a node needs of an event besides its JSON.
type eventKind struct {
	Type    wire.EventType `json:"t"`
	Role    wire.Role      `json:"r,omitempty"`
	InputID string         `json:"i,omitempty"`
	TurnID  string         `json:"u,omitempty"`
	State   string         `json:"s,omitempty"`
}

func kindOf(e db.Event) eventKind {
	m := metaOf(e)
	return eventKind{Type: m.Type, Role: m.Role, InputID: m.InputID, TurnID: m.TurnID, State: m.State}
}

// meta is the event's Meta, as Append set it on the node that committed it.
func (k eventKind) meta() db.Meta {
	return db.Meta{Role: k.Role, InputID: k.InputID, TurnID: k.TurnID, State: k.State}
}

type textNotice struct {
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

type statusNotice struct {
	Node     string     `json:"node"`
	Session  string     `json:"session"`
	Phase    wire.Phase `json:"phase"`
	TurnID   string     `json:"turn_id,omitempty"`
	Queued   int        `json:"queued"`
	LastTurn *string    `json:"last_turn,omitempty"`
}

// presenceNotice is a node's viewers of a session: its first people (as a
// presence push lists them), how many people and connections it has.
type presenceNotice struct {
	Node    string        `json:"node,omitempty"` // in a repeatNotice, the repeat's`
	Session string        `json:"session"`
	People  []wire.Person `json:"people"`
	Total   int           `json:"total"`
	Viewers int           `json:"viewers"`
}

// repeatNotice is a node's viewers of many sessions, said again at a
// heartbeat (Hub.repeat): one message for up to repeatBatch sessions,
// where a notice each made a node with thousands of sessions watched
// send thousands of messages every heartbeat, and every other node
// receive them all.
type repeatNotice struct {
	Node     string           `json:"node"`
	Sessions []presenceNotice `json:"sessions"`
}

// repeatBatch bounds the sessions of one repeatNotice: at most about
// 64 KiB with a session's first people listed.
const repeatBatch = 256

// changesNotice rings the other nodes to read the store's changes now
// (cluster_changes.go): the changes themselves are only in the store.
type changesNotice struct {
	Node string `json:"node"`
}

type request struct {
	To      string          `json:"to"` // the node that answers; others stay silent
	Op      string          `json:"op"` // "interrupt", "bot-turn", "bot-cancel"
	Session string          `json:"session"`
	Reason  string          `json:"reason,omitempty"`
	Body    json.RawMessage `json:"body,omitempty"` // bot-turn, bot-cancel: a botTurnRequest
}

type response struct {
	Turn    string      `json:"turn,omitempty"`
	Running bool        `json:"running"`
	Error   *wire.Error `json:"error,omitempty"`
}

// bus is a hub's NATS side: nil on a daemon alone.
type bus struct {
	nc    *nats.Conn
	node  string
	space string // "albedo." and the cluster's id (db.ClusterID): every subject starts with it

	mu      sync.Mutex
	pending map[*channel]bool // presence changes waiting for their coalesced notice
}

// publish sends v on subject, its node named in a header so that the
// node itself skips it unread (every node hears its own notices). A
// notice that cannot go (NATS down) is dropped: the store has what it
// says.
// subj is a notice's subject in this cluster's space: albedo.CLUSTER.NAME.
func (b *bus) subj(name string) string { return b.space + "." + name }

func (b *bus) publish(subject string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	m := nats.NewMsg(b.subj(subject))
	m.Header.Set(nodeHeader, b.node)
	m.Data = data
	_ = b.nc.PublishMsg(m)
}

// nodeHeader names the node that published a notice.
const nodeHeader = "Albedo-Node"

// events announces what one commit added to a session.
func (b *bus) events(session string, evs []db.Event) {
	if len(evs) == 0 {
		return
	}
	n := evNotice{Node: b.node, Session: session, First: evs[0].Offset, Last: evs[len(evs)-1].Offset, At: time.Now().UnixNano()}
	size := 0
	for _, e := range evs {
		size += len(e.JSON)
	}
	if size <= maxNoticeEvents {
		n.Events = make([]json.RawMessage, len(evs))
		n.Kinds = make([]eventKind, len(evs))
		for i, e := range evs {
			n.Events[i], n.Kinds[i] = e.JSON, kindOf(e)
		}
	}
	b.publish(subjEvents, n)
}

// presenceCoalesce is how long a node gathers changes to a session's
// viewers before it tells the others: a thousand joins are a few notices.
const presenceCoalesce = 100 * time.Millisecond
