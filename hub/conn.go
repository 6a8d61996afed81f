package hub

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"albedo/wire"
)

// ConnInfo names a connection in presence pushes: the identity of its
// token (Name, Role, AuthorID: access.Principal's), never what its client says,
// and the device label its client gave.
type ConnInfo struct {
	ID       string
	Name     string
	Role     wire.TokenRole
	AuthorID string
	Device   string
}

// Conn is the hub's side of one client connection: its subscriptions
// (cursors) and the replies waiting to be written. The transport (api)
// writes with one goroutine at a time calling Fill, which it starts or
// wakes from the func given to OnWake. Every other method may be called
// from any goroutine.
type Conn struct {
	// static after construction
	hub  *Hub
	info ConnInfo

	onWake atomic.Pointer[func()] // told "there is something to write" (OnWake); nil until set

	scratch []entry // owned by the goroutine calling Fill

	room chan struct{} // capacity 1: Fill took replies (see AwaitRoom)

	mu          sync.Mutex
	closed      bool
	replies     [][]byte                   // encoded frames, written before any push
	replyBytes  int                        // the sum of replies' lengths
	subs        map[string]*sub            // by session id
	ready       []*sub                     // subs with something to write, FIFO for fairness
	timer       *time.Timer                // wakes deferred subs (wakeLater)
	serving     string                     // the bot whose turns this connection answers
	turns       map[string]*botTurn        // turns handed to it, by turn id
	toolBot     string                     // the bot whose tools this connection serves (bot_tools.go)
	calls       map[string]chan toolAnswer // tool calls handed to it, by call id
	sessionsDue bool                       // a sessions push is due
	feed        *feedCursor                // its place in the sessions feed, if it follows it (feed_conn.go)
}

// sub is one cursor. Its fields are guarded by conn.mu.
type sub struct {
	conn *Conn
	ch   *channel

	gen        uint64 // bumped when re-positioned or removed
	removed    bool
	background bool // not one of the session's viewers; guarded by ch.mu
	at         int  // its index in ch.subs; guarded by ch.mu
	queued     bool // in conn.ready
	next       int64
	reset      []byte    // a reset push to write before any event
	status     bool      // a status push is due
	presence   bool      // a presence push is due
	viewers    bool      // the viewers' count changed: a status push goes with the next presence push
	presenceAt time.Time // when the last presence push was written
	deferred   bool      // waiting for the connection's timer

	textTurn  string // turn of the pending partial/delta text
	text      []byte // pending text of that turn
	textFull  bool   // text is the whole reply so far (a partial), not a delta
	textAfter int64  // the head when the text came: it waits until the cursor has written that far (its turn's start is at or before it)
	lastEnded string // the newest turn whose closing event this sub was sent
}

// Info returns the connection's presence identity.
func (c *Conn) Info() ConnInfo { return c.info }

// OnWake makes f what is called whenever Fill may have something new to
// write: a transport can then start its writer when there is something to
// write rather than keep one parked per connection. f runs on the
// goroutine that has something for the connection (a commit, a reply),
// with no lock of the hub held; it must not block. Wakes before OnWake
// are not kept: call Fill once after it.
func (c *Conn) OnWake(f func()) { c.onWake.Store(&f) }

// signal tells the connection's writer, through OnWake's func, that Fill
// may have something new to write.
func (c *Conn) signal() {
	if f := c.onWake.Load(); f != nil {
		(*f)()
	}
}

// Reply queues an encoded frame (a command reply, or a push such as a bot's
// turn) to be written before any subscription push that is not yet written.
func (c *Conn) Reply(frame []byte) {
	c.mu.Lock()
	c.queueReply(frame)
	c.mu.Unlock()
	c.signal()
}

// queueReply queues an encoded frame; caller holds c.mu.
func (c *Conn) queueReply(frame []byte) {
	if !c.closed {
		c.replies = append(c.replies, frame)
		c.replyBytes += len(frame)
	}
}

// Unsent returns the bytes of the connection's replies not yet taken by
// Fill: for metrics and tests.
func (c *Conn) Unsent() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replyBytes
}

// AwaitRoom waits until the connection's unsent replies are under the
// hub's MaxReplyBytes, or ctx ends, or the connection closes. The
// transport calls it before each command it reads: a client that sends
// commands and does not read their replies is no longer read
// (back-pressure), so what it makes the daemon hold stays bounded —
// MaxReplyBytes, plus the replies of one message of commands.
func (c *Conn) AwaitRoom(ctx context.Context) error {
	for {
		c.mu.Lock()
		full := c.replyBytes >= c.hub.opts.MaxReplyBytes && !c.closed
		c.mu.Unlock()
		if !full {
			return nil
		}
		select {
		case <-c.room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ReplyJSON encodes v, one of the contract's frame types, and queues it
// with Reply.
func (c *Conn) ReplyJSON(v any) { c.Reply(wire.Encode(v)) }

// markReady queues s for writing; caller holds c.mu.
func (c *Conn) markReady(s *sub) {
	if !s.queued && !s.removed {
		s.queued = true
		c.ready = append(c.ready, s)
	}
}

// Subscribe positions a cursor for each of subs (a second sub of a session
// re-positions it) and queues the reply that mk builds from the results
// ahead of any push of those channels. A sub that fails (no such session,
// too many channels) is reported in its SubReply and changes nothing.
func (c *Conn) Subscribe(ctx context.Context, subs []wire.Sub, mk func([]wire.SubReply) any) {
	results := make([]wire.SubReply, len(subs))
	chans := make([]*channel, len(subs))
	if len(subs) > 1 {
		// The channels a preload makes are the ones the loop below reads
		// (a sub it refuses before its read must make none: nothing
		// would take it out again).
		ids := make([]string, 0, len(subs))
		for _, s := range subs {
			if s.After == nil || *s.After >= 0 {
				ids = append(ids, s.Session)
			}
		}
		c.hub.preload(ctx, ids)
	}
	for i, s := range subs {
		results[i].Session = s.Session
		if s.After != nil && *s.After < 0 {
			// Not "ahead": a cursor before the first event is not a cursor.
			results[i].Error = wire.Errorf(wire.CodeBadRequest, "after is %d; an offset is 0 or more", *s.After)
			continue
		}
		ch, werr := c.hub.channel(ctx, s.Session)
		if werr != nil {
			results[i].Error = werr
			continue
		}
		if s.After != nil {
			ch.mu.Lock()
			ahead := *s.After > ch.head
			ch.mu.Unlock()
			if ahead {
				// Another node may have committed it: only the store says
				// whether the client is ahead of the log.
				c.hub.catchUp(ctx, ch)
			}
		}
		chans[i] = ch
	}

	c.mu.Lock()
	var touched []*channel
	for i, s := range subs {
		ch := chans[i]
		if ch == nil {
			continue
		}
		if c.closed {
			results[i].Error = wire.Errorf(wire.CodeDaemonStopping, "connection closing")
			continue
		}
		existing := c.subs[s.Session]
		if existing == nil && len(c.subs) >= c.hub.opts.MaxChannels {
			results[i].Error = wire.Errorf(wire.CodeTooMany, "a connection may watch at most %d sessions", c.hub.opts.MaxChannels)
			continue
		}
		var viewersChanged bool
		results[i], viewersChanged = c.position(ch, existing, s)
		if existing == nil || viewersChanged {
			touched = append(touched, ch)
		}
	}
	for i := range results {
		results[i].OK = results[i].Error == nil
	}
	c.queueReply(wire.Encode(mk(results)))
	c.mu.Unlock()
	c.signal()
	for _, ch := range touched {
		c.hub.viewersChanged(ch)
	}
}

// position creates or re-positions the cursor of c on ch, and says
// whether the session's viewers changed. Caller holds c.mu.
func (c *Conn) position(ch *channel, s *sub, req wire.Sub) (wire.SubReply, bool) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.deleted {
		return wire.SubReply{Session: ch.id, Error: wire.Errorf(wire.CodeNotFound, "session %q not found", ch.id)}, false
	}
	if s == nil {
		s = &sub{conn: c, ch: ch, background: true}
		c.subs[ch.id] = s
		if len(ch.subs) == 0 {
			ch.ring = newRing(c.hub.opts.RingSize, c.hub.opts.RingBytes)
		}
		ch.addSub(s)
	}
	viewersChanged := ch.setWatching(s, req.Watch == nil || *req.Watch)
	s.gen++
	s.reset, s.text, s.textTurn, s.textFull = nil, nil, "", false
	s.status, s.presence = true, true
	rep := wire.SubReply{Session: ch.id, Epoch: ch.epoch, Head: ch.head}

	switch {
	case req.After != nil && req.Epoch == ch.epoch && *req.After >= 0 && *req.After <= ch.head:
		s.next = *req.After + 1
		rep.Recovered = true
	default:
		reason := wire.ResetNew
		switch {
		case req.After != nil && req.Epoch != ch.epoch:
			reason = wire.ResetEpoch
		case req.After != nil:
			reason = wire.ResetAhead
		}
		window := int64(wire.DefaultWindow)
		if req.Window != nil {
			window = int64(min(max(*req.Window, 0), c.hub.opts.MaxWindow))
		}
		before := max(ch.head-window, 0)
		s.next = before + 1
		s.reset = wire.Encode(wire.ResetPush{
			Op: wire.PushReset, Session: ch.id, Epoch: ch.epoch, Head: ch.head,
			Before: before, More: before > 0, Reason: reason,
		})
	}
	if turn, text := ch.run.streaming(); turn != "" {
		s.textTurn, s.text, s.textFull, s.textAfter = turn, []byte(text), true, ch.head
	}
	c.markReady(s)
	return rep, viewersChanged
}

// Unsubscribe removes the cursor of session, if any, and says whether there
// was one.
func (c *Conn) Unsubscribe(session string) bool {
	c.mu.Lock()
	s := c.subs[session]
	if s != nil {
		c.dropLocked(s)
	}
	c.mu.Unlock()
	if s != nil {
		c.hub.viewersChanged(s.ch)
	}
	return s != nil
}

// Watch makes the connection one of session's viewers, or a subscriber in
// the background (see wire.Sub.Watch), and says whether it subscribes to
// session at all. The other viewers get the new presence and count.
func (c *Conn) Watch(session string, on bool) bool {
	c.mu.Lock()
	s := c.subs[session]
	changed := false
	if s != nil {
		s.ch.mu.Lock()
		changed = s.ch.setWatching(s, on)
		s.ch.mu.Unlock()
	}
	c.mu.Unlock()
	if changed {
		c.hub.viewersChanged(s.ch)
	}
	return s != nil
}

// dropLocked forgets s. Caller holds c.mu.
func (c *Conn) dropLocked(s *sub) {
	s.removed = true
	s.gen++
	delete(c.subs, s.ch.id)
	s.ch.mu.Lock()
	s.ch.setWatching(s, false)
	s.ch.removeSub(s)
	s.ch.presence = nil
	if len(s.ch.subs) == 0 {
		s.ch.ring = ring{} // nobody reads it: let it go
	}
	s.ch.mu.Unlock()
}

// Channels returns how many sessions the connection watches.
func (c *Conn) Channels() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.subs)
}

// Close removes every cursor; presence of the sessions it watched changes.
// Safe to call twice.
func (c *Conn) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	if cur := c.feed; cur != nil && cur.timer != nil {
		cur.timer.Stop()
	}
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	var chans []*channel
	for _, s := range c.subs {
		chans = append(chans, s.ch)
		c.dropLocked(s)
	}
	c.ready, c.replies, c.replyBytes = nil, nil, 0
	select {
	case c.room <- struct{}{}: // a reader waiting in AwaitRoom goes on, and finds the connection closed
	default:
	}
	serving := c.serving
	turns := slices.Collect(maps.Values(c.turns))
	c.turns = nil
	toolBot, calls := c.toolBot, slices.Collect(maps.Values(c.calls))
	c.calls = nil
	c.mu.Unlock()
	if serving != "" {
		c.hub.unserve(c, serving, turns)
	}
	if toolBot != "" {
		c.hub.unserveTools(c, toolBot, calls)
	}
	c.hub.removeConn(c)
	c.hub.feed.forget(c)
	for _, ch := range chans {
		c.hub.viewersChanged(ch)
	}
}
