package hub

import (
	"albedo/hub/blobs"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"albedo/db"
	"albedo/hub/access"
	"albedo/hub/acphost"
	"albedo/hub/mcphost"
	"albedo/hub/peer"
	"albedo/hub/provider"
	"albedo/hub/tools"
	"albedo/wire"
)

// Options are the hub's limits. Zero fields take the defaults.
type Options struct {
	RingSize  int // recent events kept in memory per watched session (256)
	RingBytes int // and at most this many bytes of them (1 MiB)
	PageSize  int // events per database page and per cursor pass (256)
	// MaxPageBytes bounds a history page (GET …/events) by the size of
	// its events as well as by count: it ends early, with more, past
	// this (1 MiB; always at least one event).
	MaxPageBytes int
	// MaxReplyBytes is how much a connection's unsent replies may hold
	// before its commands are no longer read (1 MiB; Conn.AwaitRoom).
	MaxReplyBytes int
	MaxWindow     int // largest window a sub may ask for (10 000)
	MaxChannels   int // sessions per connection (wire.MaxChannels)
	MaxInput      int // bytes of input text (wire.MaxInputBytes)
	// MaxAttachmentBytes is the largest blob the store takes
	// (wire.DefaultMaxAttachmentBytes).
	MaxAttachmentBytes int64
	// MaxMentionTurns is how many turns one message's mentions start
	// (wire.DefaultMaxMentionTurns); the mentions past it start none.
	MaxMentionTurns int
	// MaxReply is the longest reply a provider or a bot may stream, in
	// bytes: past it the reply is cut and the turn fails (1 MiB).
	MaxReply int
	// MaxTranscript caps the text sent per turn to a provider with no
	// context window (a bot; compaction.go): the newest messages that fit
	// (512 KiB), at most MaxTranscriptMessages (1000).
	MaxTranscript         int
	MaxTranscriptMessages int

	// Providers answers turns; nil means the built-in echo only.
	Providers *provider.Registry
	// MCP is the MCP servers the daemon hosts, whose tools turns may
	// call (nil: none).
	MCP *mcphost.Host
	// Agents runs the coding agents of sessions whose provider is an
	// acp profile (agent_turns.go); nil: such turns fail, saying so.
	Agents *acphost.Host

	// Bus, when set, joins this node to the other nodes of a cluster
	// (albedo/hub/peer; the daemon's is albedo/hub/natsbus): its
	// commits, streaming replies, viewers and run state go to them,
	// theirs come here. The hub starts it (Start) on a shared store.
	Bus peer.Bus

	// Node names this daemon in the turn leases of a shared (PostgreSQL)
	// database; Lease is how long a claim lasts unrenewed (DefaultLease).
	// SQLite ignores both: its one daemon runs every turn.
	Node  string
	Lease time.Duration

	// changesEvery and heartbeatEvery pace a node's looks at the store
	// (the constants of those names when zero); tests stretch them to
	// show what the bus alone carries.
	changesEvery, heartbeatEvery time.Duration

	// DB tunes the database Open opens. Its OnCommit, if set, runs after
	// the hub's own commit hook, on the writer goroutine (tests and
	// benchmarks count commits with it).
	DB db.Options
}

// DefaultNode names a node by its host and process, unique on a machine
// and readable in a log: Options.Node when none is given.
func DefaultNode() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

func (o *Options) defaults() {
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}

	if o.Node == "" {
		o.Node = DefaultNode()
	}
	if o.changesEvery <= 0 {
		o.changesEvery = changesEvery
	}
	if o.heartbeatEvery <= 0 {
		o.heartbeatEvery = heartbeatEvery
	}
	if o.RingSize <= 0 {
		o.RingSize = 256
	}
	if o.RingBytes <= 0 {
		o.RingBytes = 1 << 20
	}
	if o.PageSize <= 0 {
		o.PageSize = 256
	}
	if o.MaxPageBytes <= 0 {
		o.MaxPageBytes = 1 << 20
	}
	if o.MaxReplyBytes <= 0 {
		o.MaxReplyBytes = 1 << 20
	}
	if o.MaxWindow <= 0 {
		o.MaxWindow = 10000
	}
	if o.MaxChannels <= 0 {
		o.MaxChannels = wire.MaxChannels
	}
	if o.MaxTranscript <= 0 {
		o.MaxTranscript = 512 << 10
	}
	if o.MaxTranscriptMessages <= 0 {
		o.MaxTranscriptMessages = 1000
	}
	if o.MaxInput <= 0 {
		o.MaxInput = wire.MaxInputBytes
	}
	if o.MaxReply <= 0 {
		o.MaxReply = 1 << 20
	}
	if o.MaxMentionTurns <= 0 {
		o.MaxMentionTurns = wire.DefaultMaxMentionTurns
	}
}

// Hub is the run-time registry of sessions and connections. All methods may
// be called from any goroutine.
type Hub struct {
	// static after Open
	db        *db.DB        // opened by Open with onCommit as its hook; closed by Close
	loads     *sessionLoads // channels' sessions, read through db
	opts      Options
	log       *slog.Logger
	providers *provider.Registry
	blobs     *blobs.Store // files: blobs stored in db, a chunk at a time

	// Turn runners: one goroutine per session with queued turns, all
	// derived from ctx and counted in runners.
	ctx      context.Context
	cancel   context.CancelFunc
	runners  sync.WaitGroup
	loops    sync.WaitGroup // goroutines that end with ctx, not turns: the loops (expireLinks, heartbeat, watchOrphans, followChanges, watchClock, the feed's poll) and goTracked's
	trackMu  sync.Mutex     // orders goTracked's Add before Close's Wait
	closing  bool           // Close has begun: goTracked starts nothing
	stopping atomic.Bool    // no new inputs, no new turns
	draining atomic.Bool    // no new leases claimed; those held given up after their turn (Drain)

	tokens access.Table // owner (made by a command), bot and viewer tokens
	feed   feed         // every session as the sessions feed shows it (feed.go)
	pins   pinCache     // each person's pinned sessions, as read (pins.go)
	models modelLists   // each provider's models, as last listed (models.go)
	bots   botTable     // connections serving bot turns
	// Tools: what the sources offer, the connections serving bots'
	// tools, and the calls waiting for decisions (tool_turns.go).
	toolSources tools.Sources
	toolConns   toolServers
	approvals   approvalWaits
	remote      remoteBots // other nodes' bots, and turns handed across (cluster_bots.go)
	stats       hubStats   // for Stats

	bus           peer.Bus                                         // peer.Nop on a daemon alone
	tokenHook     atomic.Pointer[func(revoked, narrowed []string)] // closes connections of tokens another node changed
	expiredHook   atomic.Pointer[func(ids []string)]               // closes connections of links that expired (links.go)
	links         linkUse                                          // when links were last used (links.go)
	reconcile     chan struct{}                                    // asks the heartbeat for a look at the store now
	changesRung   chan struct{}                                    // asks followChanges for a look at the store now
	ends          endWaiters                                       // what waits for turns' ends to be committed
	settingsReads settingsReads                                    // sessions whose settings a notice says to read again (cluster_notices.go)

	mu    sync.Mutex
	chans map[string]*channel
	conns map[*Conn]struct{}
	// byAuthor are the live connections by author id: a person's own,
	// found without a scan of every connection (pushRead), each added and
	// removed at a constant cost however many the person holds (a crowd
	// on one token).
	byAuthor map[string]map[*Conn]struct{}
	// listeners are the live connections that hear of sessions made and
	// deleted (sessions_push.go): told without a pass over the others.
	listeners map[*Conn]struct{}

	// testHookTokenRead, when a test sets it, runs after a lookup's read
	// of the store and before its put (lookupStored). Set only by the
	// goroutine that then calls Authenticate.
	testHookTokenRead func()
}

// Open opens (creating and migrating it if needed) the database at path,
// with opts.DB and opts.Node, and returns New's hub over it.
func Open(ctx context.Context, path string, opts Options, log *slog.Logger) (*Hub, error) {
	dopts := opts.DB
	dopts.Node = opts.Node
	d, err := db.Open(ctx, path, dopts)
	if err != nil {
		return nil, err
	}
	h, err := New(ctx, d, opts, log)
	if err != nil {
		d.Close(ctx)
		return nil, err
	}
	return h, nil
}

// New returns the hub over d, an open store that nothing has written to
// since it was opened, and takes it over: the hub hooks its commits
// (db.DB.HookCommits), and Close closes it. opts.DB is Open's, not New's:
// d was opened with its own options.
func New(ctx context.Context, d *db.DB, opts Options, log *slog.Logger) (*Hub, error) {
	opts.defaults()
	if log == nil {
		log = slog.Default()
	}
	reg := opts.Providers
	if reg == nil {
		reg, _ = provider.NewRegistry(provider.Config{}, nil)
	}
	hctx, cancel := context.WithCancel(context.Background())
	h := &Hub{opts: opts, log: log, providers: reg, ctx: hctx, cancel: cancel,
		chans: map[string]*channel{}, conns: map[*Conn]struct{}{}, byAuthor: map[string]map[*Conn]struct{}{}, listeners: map[*Conn]struct{}{}, reconcile: make(chan struct{}, 1), changesRung: make(chan struct{}, 1), stats: newHubStats()}
	h.feed.h = h
	if h.bus = opts.Bus; h.bus == nil {
		h.bus = peer.Nop{}
	}
	d.HookCommits(h.onCommit)
	h.db, h.loads = d, newSessionLoads(hctx, d)
	h.blobs = blobs.New(d, opts.MaxAttachmentBytes)
	if ms := d.Migrated(); len(ms) > 0 {
		log.Info("applied migrations", "migrations", strings.Join(ms, ","))
	}
	h.loops.Add(2)
	go h.expireLinks()
	go h.sweepBlobs()
	reg.SetBots(func(name string) (provider.Provider, error) {
		if !h.botExists(name) {
			return nil, fmt.Errorf("unknown bot %q: add it with `albedo bots add %s`", name, name)
		}
		return botProvider{h: h, name: name}, nil
	})
	return h, nil
}

// Close interrupts running turns (reason daemon_shutdown), waits for the
// runners, and closes the database once the writes already queued are
// committed. Safe to call twice.
func (h *Hub) Close(ctx context.Context) error {
	h.InterruptAll(ctx, wire.ReasonDaemonShutdown)
	h.cancel()
	h.runners.Wait()
	h.stopTracking()
	h.loops.Wait()
	return h.db.Close(ctx)
}

// onCommit is the database writer's commit hook: it puts newly committed
// events into their channels, wakes the cursors watching them, and queues
// the turn of each newly accepted user input, so that turns queue in
// acceptance order. It runs on the writer goroutine and never blocks on a
// client.
func (h *Hub) onCommit(cs []db.Committed) {
	now := time.Now()
	for _, c := range cs {
		h.feed.committed(c, now)
		var ended []string
		var inputs []queued
		for _, e := range c.Events {
			m := metaOf(e)
			if m.ends() {
				ended = append(ended, m.TurnID)
			}
			if m.Type == wire.EventMessage && m.Role == wire.RoleUser && m.InputID != "" && m.TurnID != "" { // a quiet message starts none

				inputs = append(inputs, queued{inputID: m.InputID, turnID: m.TurnID, offset: e.Offset})
			}
		}
		if len(c.Events) > 0 {
			h.bus.Publish(peer.Commit{Node: h.opts.Node, Session: c.Session, Epoch: c.Epoch, At: now, Events: c.Events})
		}
		h.mu.Lock()
		ch := h.chans[c.Session]
		h.mu.Unlock()
		if ch == nil && len(inputs) > 0 {
			ch = h.ensureChannel(c.Session) // its turns need a runner
		}
		if ch == nil {
			continue
		}
		h.deliver(ch, c.Events, ended)
		if len(inputs) > 0 && h.db.Shared() {
			h.wake(ch) // the lease's holder reads them from the database
			continue
		}
		for _, q := range inputs {
			h.enqueue(ch, q)
		}
	}
}

// deliver puts committed events (in offset order, following the channel's
// head) into the channel and wakes its cursors; ended lists the turns they
// close, whose streaming text is over.
func (h *Hub) deliver(ch *channel, evs []db.Event, ended []string) {
	h.decisionsIn(ch.id, evs)
	for _, s := range ch.apply(evs, ended) {
		s.conn.mu.Lock()
		for _, t := range ended {
			if s.textTurn == t {
				s.text, s.textFull = nil, false
			}
		}
		s.conn.markReady(s)
		s.conn.mu.Unlock()
		s.conn.signal()
	}
}

// channel returns the session's channel, loading it on first use. A missing
// session is a not_found error.
func (h *Hub) channel(ctx context.Context, id string) (*channel, *wire.Error) {
	if id == "" {
		return nil, wire.Errorf(wire.CodeBadRequest, "session is required")
	}
	ch := h.ensureChannel(id)
	if err := ch.load(ctx, h.loads); err != nil {
		if errors.Is(err, db.ErrNotFound) {
			h.mu.Lock()
			if h.chans[id] == ch {
				delete(h.chans, id)
			}
			h.mu.Unlock()
			return nil, wire.Errorf(wire.CodeNotFound, "session %q not found", id)
		}
		if errors.Is(ctx.Err(), context.Canceled) {
			// The caller has gone (a connection closed while its hello's
			// sessions loaded): no one reads the reply, and nothing
			// failed. A deadline that passed is the store's slowness,
			// and is logged.
			return nil, wire.Errorf(wire.CodeInternal, "cannot read session %q: %v", id, ctx.Err())
		}
		h.log.Error("load session", "session", id, "err", err)
		return nil, wire.Errorf(wire.CodeInternal, "cannot read session %q", id)
	}
	return ch, nil
}

// ensureChannel returns the session's channel, making it (unloaded) if
// there is none.
func (h *Hub) ensureChannel(id string) *channel {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := h.chans[id]
	if ch == nil {
		ch = newChannel(id)
		h.chans[id] = ch
	}
	return ch
}

// Connect registers a new connection.
func (h *Hub) Connect(info ConnInfo) *Conn {
	if info.ID == "" {
		info.ID = randomID(6)
	}
	c := &Conn{hub: h, info: info, room: make(chan struct{}, 1), subs: map[string]*sub{}}
	h.mu.Lock()
	h.conns[c] = struct{}{}
	mine := h.byAuthor[info.AuthorID]
	if mine == nil {
		mine = map[*Conn]struct{}{}
		h.byAuthor[info.AuthorID] = mine
	}
	mine[c] = struct{}{}
	h.mu.Unlock()
	return c
}

func (h *Hub) removeConn(c *Conn) {
	h.mu.Lock()
	delete(h.conns, c)
	delete(h.listeners, c)
	id := c.info.AuthorID
	if mine := h.byAuthor[id]; mine != nil {
		if delete(mine, c); len(mine) == 0 {
			delete(h.byAuthor, id)
		}
	}
	h.mu.Unlock()
}

// authorConns returns a copy of the live connections of author id.
func (h *Hub) authorConns(id string) []*Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Collect(maps.Keys(h.byAuthor[id]))
}

// Conns returns a copy of the live connections.
func (h *Hub) Conns() []*Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Collect(maps.Keys(h.conns))
}

// allChannels returns a copy of the channels this node has loaded.
func (h *Hub) allChannels() []*channel {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Collect(maps.Values(h.chans))
}

// presenceChanged marks presence due on every cursor of ch, and the status
// with it (its count of viewers; takeReady).
func (h *Hub) presenceChanged(ch *channel) {
	h.markAll(ch, func(s *sub, _ int64) { s.presence, s.viewers = true, true })
}

// statusChanged marks a status push due on every cursor of ch.
func (h *Hub) statusChanged(ch *channel) {
	h.markAll(ch, func(s *sub, _ int64) { s.status = true })
}

// viewersChanged is presenceChanged for a change of this node's viewers:
// its cursors at once or within presenceEvery (presenceSoon), the other
// nodes of a cluster soon after (publishPresenceSoon).
func (h *Hub) viewersChanged(ch *channel) {
	h.presenceSoon(ch)
	h.publishPresenceSoon(ch)
}

// runChanged is statusChanged for a change of the run state this node
// drives: its own cursors, and the other nodes of a cluster
// (publishStatus).
func (h *Hub) runChanged(ch *channel) {
	h.feed.touch(ch.id)
	h.statusChanged(ch)
	h.publishStatus(ch)
}

// markAll applies mark to every cursor of ch (under its connection's lock),
// with ch's head when the cursors were listed, and wakes the connections.
// Copy, then act: ch.mu is not held meanwhile.
func (h *Hub) markAll(ch *channel, mark func(s *sub, head int64)) {
	ch.mu.Lock()
	subs, head := ch.subList(), ch.head
	ch.mu.Unlock()
	for _, s := range subs {
		s.conn.mu.Lock()
		mark(s, head)
		s.conn.markReady(s)
		s.conn.mu.Unlock()
		s.conn.signal()
	}
}

// publishText hands a streaming reply's text to every cursor of ch: appended
// to what the cursor has not written yet, so a slow reader gets one merged
// delta instead of many.
func (h *Hub) publishText(ch *channel, turnID, delta string) {
	h.markAll(ch, func(s *sub, head int64) {
		switch {
		case s.lastEnded == turnID:
		case s.textTurn == turnID:
			s.text = append(s.text, delta...)
		default:
			s.textTurn, s.text, s.textFull, s.textAfter = turnID, []byte(delta), false, head
		}
	})
}

// replaceText gives every cursor of ch the whole reply of turnID so far,
// replacing what they had (a partial push; an empty one when the reply
// starts over).
func (h *Hub) replaceText(ch *channel, turnID, text string) {
	h.markAll(ch, func(s *sub, head int64) {
		if s.lastEnded != turnID {
			s.textTurn, s.text, s.textFull, s.textAfter = turnID, []byte(text), true, head
		}
	})
}

func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// MaxChannels is the limit of sessions per connection.
func (h *Hub) MaxChannels() int { return h.opts.MaxChannels }

// WriterStats returns the database writer's counters (db.Writer.Stats).
func (h *Hub) WriterStats() db.WriterStats { return h.db.Writer().Stats() }
