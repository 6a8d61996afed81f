package hub

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"

	"albedo/db"
	"albedo/hub/peer"
	"albedo/wire"
)

// channel is one session at run time. Its fields are guarded by mu except
// where noted.
type channel struct {
	id string
	// static after construction
	eventPrefix []byte // `{"op":"event","session":"<id>","event":`

	loadMu sync.Mutex // serialises load, across its read of the session row; taken before mu
	loaded bool       // guarded by loadMu

	mu       sync.Mutex
	deleted  bool
	epoch    string
	head     int64
	settings settings // the newest version seen, as status tells it
	spans    db.Spans // where its events are stored (nil until loaded; hub's forks.go)
	ring     ring     // allocated while anyone subscribes
	subs     []*sub   // the cursors on it, each at its index (sub.at)
	watching int      // the subs that are viewers (not in the background)
	people   people   // the viewers by identity (presence.go)
	presence []byte   // the encoded presence push; nil when the viewers changed since
	// presenceAt is when the viewers' change was last marked on every
	// cursor, and presenceDue says a marking waits for its turn
	// (presenceSoon).
	presenceAt  time.Time
	presenceDue bool

	run runState // the turn runner's view; see turn.go
	// compactMu lets one compaction at a time read and summarize the
	// session (compaction.go): a turn's and one asked for by hand.
	compactMu sync.Mutex

	// What other nodes of a cluster said (cluster_notices.go): their
	// viewers, and the run state of the node running the session's turns.
	remoteViewers map[string]remoteViewers // by node
	remoteRun     *peer.Status
	remoteRunAt   time.Time
	// presenceToPeers: this node's viewers are due to be told to the
	// other nodes (publishPresenceSoon).
	presenceToPeers bool
	endedTurn       string // the newest turn seen closing: its late text is ignored
}

// settings is what a status push says of a session's settings, at the
// newest version a channel has seen. Only this is kept of the session's
// row: a channel lives as long as anyone watches, and the row's strings
// (its title, its system prompt) were most of an idle channel's memory.
type settings struct {
	version       int64
	model, effort string
	// Who answers its messages (participants.go): its provider as named
	// ("" the default), its participants, and respond as stored.
	provider, respond string
	participants      []string
}

// newerSettings keeps s if it is a newer version than the channel has,
// and says whether it was. Caller holds mu.
func (ch *channel) newerSettings(s settings) bool {
	if s.version <= ch.settings.version {
		return false
	}
	ch.settings = s
	return true
}

// etag is the session's version as an HTTP entity tag (db.Session.ETag).
func (s settings) etag() string { return `"` + strconv.FormatInt(s.version, 10) + `"` }

// remoteViewers is another node's viewers of a session, as of at: its
// first people, how many it has, and its connections.
type remoteViewers struct {
	people  []wire.Person
	total   int
	viewers int
	at      time.Time
}

func newChannel(id string) *channel {
	q := wire.Encode(id)
	prefix := append([]byte(`{"op":"event","session":`), q...)
	prefix = append(prefix, `,"event":`...)
	return &channel{id: id, eventPrefix: prefix}
}

// load reads the session row once. It returns db.ErrNotFound (wrapped) for a
// session that does not exist.
func (ch *channel) load(ctx context.Context, loads *sessionLoads) error {
	ch.loadMu.Lock()
	defer ch.loadMu.Unlock()
	if ch.loaded {
		return nil
	}
	s, err := loads.get(ctx, ch.id)
	if err != nil {
		return err
	}
	return ch.fill(ctx, loads.db, s)
}

// loadFrom is load with the session's row read already (Hub.preload).
func (ch *channel) loadFrom(ctx context.Context, d *db.DB, s db.SessionState) error {
	ch.loadMu.Lock()
	defer ch.loadMu.Unlock()
	if ch.loaded {
		return nil
	}
	return ch.fill(ctx, d, s)
}

// isLoaded says whether the session's row has been read.
func (ch *channel) isLoaded() bool {
	ch.loadMu.Lock()
	defer ch.loadMu.Unlock()
	return ch.loaded
}

// fill takes the session's state s into the channel, which is then
// loaded. The caller holds loadMu.
func (ch *channel) fill(ctx context.Context, d *db.DB, s db.SessionState) error {
	last := s.LastTurn
	sp := db.Own(ch.id)
	if s.BaseSession != "" {
		var err error
		if _, sp, err = d.SpansOf(ctx, ch.id); err != nil {
			return err
		}
	}
	ch.mu.Lock()
	ch.spans = sp
	if ch.run.lastTurn == "" && last != wire.TurnStarted {
		ch.run.lastTurn = last
	}
	ch.epoch = s.Epoch
	ch.head = max(ch.head, s.Head)
	ch.newerSettings(stateSettings(s))
	ch.mu.Unlock()
	ch.loaded = true
	return nil
}

// epochOf is the channel's epoch ("" until loaded).
func (ch *channel) epochOf() string {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.epoch
}

// frame wraps a stored event into its push frame.
func (ch *channel) frame(e db.Event) entry {
	b := make([]byte, 0, len(ch.eventPrefix)+len(e.JSON)+1)
	b = append(b, ch.eventPrefix...)
	b = append(b, e.JSON...)
	b = append(b, '}')
	return entry{offset: e.Offset, frame: b, turnEnd: turnEnd(e)}
}

// meta is what the hub needs to know of an event beyond its offset.
type meta struct {
	Type    wire.EventType `json:"type"`
	Role    wire.Role      `json:"role"`
	InputID string         `json:"input_id"`
	TurnID  string         `json:"turn_id"`
	State   string         `json:"state"`
}

// ends says whether the event closes a turn.
func (m meta) ends() bool {
	return m.Type == wire.EventTurn && m.State != "" && m.State != wire.TurnStarted
}

// metaOf returns the fields of e that drive turns: from e.Meta for an event
// this daemon has just committed, decoded for one read back from storage.
// Other events cost nothing.
func metaOf(e db.Event) meta {
	var m meta
	switch {
	case e.Meta != (db.Meta{}):
		m = meta{Role: e.Meta.Role, InputID: e.Meta.InputID, TurnID: e.Meta.TurnID, State: e.Meta.State}
	case e.Type == wire.EventTurn || e.Type == wire.EventMessage:
		_ = json.Unmarshal(e.JSON, &m)
	}
	m.Type = e.Type
	return m
}

// turnEnd returns the turn id when e closes a turn.
func turnEnd(e db.Event) string {
	if m := metaOf(e); m.ends() {
		return m.TurnID
	}
	return ""
}

// apply takes newly committed events (in offset order) and returns the subs
// to wake. ended lists the turns these events close: their streaming text is
// over. Called from the commit hook.
func (ch *channel) apply(evs []db.Event, ended []string) []*sub {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	for _, t := range ended {
		if ch.run.streamTurn == t {
			ch.run.streamTurn = ""
			ch.run.streamText.Reset()
		}
		ch.endedTurn = t
	}
	for _, e := range evs {
		if e.Offset > ch.head {
			ch.head = e.Offset
		}
		if len(ch.subs) > 0 {
			ch.ring.push(ch.frame(e))
		}
	}
	return ch.subList()
}

// backfill puts es, events a cursor read from the store, into the ring
// when the ring is empty and they run up to the head: the events that came
// while nobody watched (apply keeps no ring then) are read from the store
// once, not once for each cursor that comes back behind the head, as a
// whole crowd does after a restart. epoch is the channel's when they were
// read.
func (ch *channel) backfill(epoch string, es []entry) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if len(es) == 0 || ch.ring.n > 0 || len(ch.subs) == 0 || ch.epoch != epoch || es[len(es)-1].offset != ch.head {
		return
	}
	for _, e := range es {
		ch.ring.push(e)
	}
}

func (ch *channel) subList() []*sub {
	return slices.Clone(ch.subs)
}

// addSub puts s among the channel's cursors. Caller holds mu.
func (ch *channel) addSub(s *sub) {
	s.at = len(ch.subs)
	ch.subs = append(ch.subs, s)
}

// removeSub takes s from the channel's cursors, moving the last into its
// place. A slice rather than a set: most sessions have one or two
// cursors, and for so few a map costs each idle subscription more memory
// than a slice's entry does. Caller holds mu.
func (ch *channel) removeSub(s *sub) {
	if s.at >= len(ch.subs) || ch.subs[s.at] != s {
		return // not among them: a second removal would move another cursor
	}
	last := len(ch.subs) - 1
	moved := ch.subs[last]
	ch.subs[s.at], moved.at = moved, s.at
	ch.subs[last] = nil
	ch.subs = ch.subs[:last]
	if last == 0 {
		ch.subs = nil // a crowd that has left leaves no array behind
	}
}

// presenceFrame returns the encoded presence push, encoding it once per
// change of the watchers: when a thousand viewers join one by one, each
// writer sends the current list, and nobody encodes it a thousand times
// per join. Caller holds mu.
func (ch *channel) presenceFrame() []byte {
	if ch.presence == nil {
		ch.presence = wire.Encode(ch.presencePush(time.Now()))
	}
	return ch.presence
}

// setWatching makes s a viewer (on) or a subscriber in the background, and
// says whether that changed anything. Caller holds mu.
func (ch *channel) setWatching(s *sub, on bool) bool {
	if s.background != on {
		return false
	}
	s.background = !on
	if on {
		ch.watching++
		ch.people.join(s.conn.info)
	} else {
		ch.watching--
		ch.people.leave(s.conn.info)
	}
	ch.presence = nil
	return true
}

// statusFrame is statusPush, encoded: one for every cursor that has a
// status due. Caller holds mu.
func (ch *channel) statusFrame() []byte {
	sp := ch.statusPush()
	return wire.AppendStatusPush(make([]byte, 0, wire.StatusPushSize(&sp)), &sp)
}

// statusPush snapshots the run state. Caller holds mu.
func (ch *channel) statusPush() wire.StatusPush {
	st := ch.status()
	viewers := ch.watching
	for _, rv := range ch.remoteViewers {
		viewers += rv.viewers
	}
	return wire.StatusPush{
		Op: wire.PushStatus, Session: ch.id,
		Phase: st.Phase, TurnID: st.TurnID, Queued: st.Queued, LastTurn: st.LastTurn,
		Model: ch.settings.model, Effort: ch.settings.effort, ETag: ch.settings.etag(),
		Head: ch.head, Viewers: viewers, Pending: st.Pending, Agent: st.Agent,
	}
}

// status is the session's run state: this node's, or, while another node
// runs the session's turns and has said so lately, that node's. Caller
// holds mu.
func (ch *channel) status() wire.Status {
	st := ch.run.status()
	if r := ch.remoteRun; r != nil && !ch.run.running && time.Since(ch.remoteRunAt) < remoteTTL {
		st.Phase, st.TurnID, st.Queued, st.Pending, st.Agent = r.Phase, r.TurnID, r.Queued, r.Pending, r.Agent
		if r.LastTurn != nil {
			st.LastTurn = r.LastTurn
		}
	}
	return st
}
