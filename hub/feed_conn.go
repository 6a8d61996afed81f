package hub

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"albedo/hub/access"
	"albedo/wire"
)

// feedOverlap is how far back before a position a resume by time reads
// again: more than a commit takes to become visible after its time was
// taken, the nodes' clocks' difference (maxClockSkew) and a poll's
// interval together. What it sends again is harmless: a feed says what
// sessions are, not what happened to them.
const feedOverlap = 5 * time.Second

// maxFeedGone bounds the sessions a connection is waiting to be told it
// may no longer see; past it the rest are dropped, and the client learns
// when it opens one (forbidden).
const maxFeedGone = 1024

// feedCursor is a connection's place in the feed. Guarded by Conn.mu.
type feedCursor struct {
	p      access.Principal
	reader string    // the person's id for read markers; "" for none
	seq    uint64    // changes numbered up to it are sent (or not the connection's)
	minAt  time.Time // a resume by time: sessions last changed before it were said before it
	pos    time.Time // the store's time the pushes sent cover
	due    bool      // a change may be waiting
	next   time.Time // no push before it (coalescing)
	timer  *time.Timer
	gone   []string // sessions it may no longer see, to be said
	counts unreadCounts
}

// Feed starts (or, from pos, resumes) the connection's feed, and queues
// the reply to command id before any feed push: the first page, or, for
// a resume, none (what changed since comes in pushes).
func (c *Conn) Feed(ctx context.Context, id int64, p access.Principal, pos string, limit int) error {
	limit, err := feedLimit(limit)
	if err != nil {
		return err
	}
	f := &c.hub.feed
	if err := f.ensure(ctx); err != nil {
		return wireErr(err)
	}
	cur := &feedCursor{p: p}
	if p.Role != wire.TokenViewer && p.Role != wire.TokenBot {
		cur.reader = p.AuthorID()
	}
	reply := wire.FeedReply{Resumed: true, Pos: pos}
	var pins []string // the first page holds them all, however old
	for id := range c.hub.pins.of(ctx, c.hub.db, cur.reader) {
		pins = append(pins, id)
	}
	slices.Sort(pins)
	f.mu.Lock()
	if seq, minAt, at, ok := f.resumable(pos); ok {
		cur.seq, cur.minAt, cur.pos = seq, minAt, at
	} else {
		cur.seq, cur.pos = f.seq, f.watermark()
		reply = wire.FeedReply{Pos: f.posOf(cur.seq, cur.pos)}
	}
	var page, extra []feedEntry
	if !reply.Resumed {
		page = f.page(p, nil, limit+1)
		extra = f.pinned(p, pins, page[:min(limit, len(page))])
	}
	f.mu.Unlock()
	if !reply.Resumed {
		reply.Sessions, reply.Next = c.hub.feedPage(ctx, page, limit, p, cur.reader, &cur.counts)
		reply.Sessions = append(reply.Sessions, c.hub.feedItems(ctx, extra, p, cur.reader, &cur.counts)...)
	}
	f.listen(c)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		f.forget(c)
		return nil
	}
	if old := c.feed; old != nil && old.timer != nil {
		old.timer.Stop()
	}
	c.feed = cur
	cur.due = true // what changed since cur.seq, even before listen, is looked for
	c.queueReply(wire.Encode(wire.Reply{ID: id, OK: true, Feed: &reply}))
	c.mu.Unlock()
	c.signal()
	return nil
}

// FeedPage returns the page of the feed after cursor (a page's next,
// which is never ""; the first page comes with Feed).
func (c *Conn) FeedPage(ctx context.Context, p access.Principal, cursor string, limit int) (wire.FeedReply, error) {
	if cursor == "" {
		return wire.FeedReply{}, wire.Errorf(wire.CodeBadRequest, "cursor is required: the next of the page before (the first page comes with feed)")
	}
	limit, err := feedLimit(limit)
	if err != nil {
		return wire.FeedReply{}, err
	}
	after, err := parsePageCursor(cursor)
	if err != nil {
		return wire.FeedReply{}, err
	}
	f := &c.hub.feed
	if err := f.ensure(ctx); err != nil {
		return wire.FeedReply{}, wireErr(err)
	}
	reader := ""
	if p.Role != wire.TokenViewer && p.Role != wire.TokenBot {
		reader = p.AuthorID()
	}
	f.mu.Lock()
	page := f.page(p, after, limit+1)
	f.mu.Unlock()
	var reply wire.FeedReply
	reply.Sessions, reply.Next = c.hub.feedPage(ctx, page, limit, p, reader, nil)
	return reply, nil
}

// feedLimit checks a page's limit (0 for the default).
func feedLimit(limit int) (int, error) {
	switch {
	case limit < 0:
		return 0, wire.Errorf(wire.CodeBadRequest, "limit must be positive")
	case limit == 0:
		return wire.DefaultFeedPage, nil
	}
	return min(limit, wire.MaxFeedPage), nil
}

// feedPage makes the items of a page read with one more entry than
// limit, and the cursor of the page after it when there is one.
func (h *Hub) feedPage(ctx context.Context, page []feedEntry, limit int, p access.Principal, reader string, counts *unreadCounts) ([]wire.FeedItem, string) {
	next := ""
	if len(page) > limit {
		page = page[:limit]
		last := page[len(page)-1]
		next = pageCursor(last.at, last.id)
	}
	return h.feedItems(ctx, page, p, reader, counts), next
}

// feedDue notes that the feed changed; the connection's writer sends what
// it may see of it.
func (c *Conn) feedDue() {
	c.mu.Lock()
	cur := c.feed
	if cur != nil {
		cur.due = true
	}
	c.mu.Unlock()
	if cur != nil {
		c.signal()
	}
}

// feedLost tells the connection's feed that it may no longer see session.
func (c *Conn) feedLost(session string) {
	c.mu.Lock()
	cur := c.feed
	if cur != nil && len(cur.gone) < maxFeedGone {
		cur.gone = append(cur.gone, session)
		cur.due = true
	}
	c.mu.Unlock()
	if cur != nil {
		c.signal()
	}
}

// fillFeed appends a feed push to buf when one is due and fits: the
// sessions changed since the connection's cursor, at most
// wire.MaxFeedPush, each as it is now. Caught up, it sends the next at
// least wire.FeedEveryMS later, so that changes between are said once.
func (c *Conn) fillFeed(ctx context.Context, buf []byte, limit int) []byte {
	c.mu.Lock()
	cur := c.feed
	if cur == nil || !cur.due || c.closed {
		c.mu.Unlock()
		return buf
	}
	if now := time.Now(); now.Before(cur.next) {
		if cur.timer == nil {
			cur.timer = time.AfterFunc(cur.next.Sub(now), func() {
				c.mu.Lock()
				cur.timer = nil
				c.mu.Unlock()
				c.signal()
			})
		}
		c.mu.Unlock()
		return buf
	}
	cur.due = false // a change from now on sets it again
	from, minAt, p, reader := cur.seq, cur.minAt, cur.p, cur.reader
	said := slices.Clone(cur.gone[:min(len(cur.gone), wire.MaxFeedPush)])
	c.mu.Unlock()

	b := c.hub.feed.changesAfter(from, minAt, p, wire.MaxFeedPush-len(said))
	items := c.hub.feedItems(ctx, b.entries, p, reader, &cur.counts)
	gone, revoked := feedGone(said, b.gone, items)

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.feed != cur {
		return buf
	}
	pos := cur.pos
	if b.caughtUp {
		pos = b.watermark
	}
	if len(items)+len(gone) > 0 {
		frame := wire.Encode(wire.FeedPush{Op: wire.PushFeed, Pos: c.hub.feed.posOf(b.upTo, pos), Sessions: items, Gone: gone, Revoked: revoked})
		if !fits(buf, frame, limit) && len(buf) > 0 {
			cur.due = true // next time, in a batch of its own
			return buf
		}
		buf = appendFrame(buf, frame)
	}
	cur.seq, cur.pos = b.upTo, pos
	cur.gone = cur.gone[len(said):]
	if b.caughtUp && len(cur.gone) == 0 {
		cur.minAt = time.Time{}
		cur.next = time.Now().Add(wire.FeedEveryMS * time.Millisecond)
	} else {
		cur.due = true
	}
	return buf
}

// feedGone is what a push says gone: the sessions deleted, and those the
// connection lost sight of (lost), each once; revoked is the latter, but
// for those deleted too (deleted, whatever else befell them) and those
// the push holds (items: seen again since, by a grant given back).
func feedGone(lost, deleted []string, items []wire.FeedItem) (gone, revoked []string) {
	gone = slices.Clone(deleted)
	for _, id := range lost {
		back := slices.ContainsFunc(items, func(it wire.FeedItem) bool { return it.ID == id })
		if !back && !slices.Contains(gone, id) {
			gone = append(gone, id)
			revoked = append(revoked, id)
		}
	}
	return gone, revoked
}

// The feed's positions: "boot.seq.ms", the index's boot, the number of
// the last change sent, and the store's time (Unix ms) those pushes
// cover. On the daemon that made it, a resume goes on after seq; on
// another (restarted, or another node), after the time less feedOverlap.

// posOf is the position after change seq, covering the store's time at.
// It reads only f.boot, set before the index is ready, and so before any
// cursor exists: no lock is needed.
func (f *feed) posOf(seq uint64, at time.Time) string {
	return fmt.Sprintf("%s.%d.%d", f.boot, seq, at.UnixMilli())
}

// resumable reads a position and says where a resume from it starts: a
// change number, and the time before which nothing is sent again; at is
// the time the position covers. ok is false for a fresh start (no
// position, one this daemon cannot read, or one older than the
// tombstones). Caller holds f.mu.
func (f *feed) resumable(pos string) (seq uint64, minAt, at time.Time, ok bool) {
	parts := strings.Split(pos, ".")
	if len(parts) != 3 {
		return 0, time.Time{}, time.Time{}, false
	}
	n, err1 := strconv.ParseUint(parts[1], 10, 64)
	ms, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, time.Time{}, time.Time{}, false
	}
	at = time.UnixMilli(ms)
	switch {
	case parts[0] == f.boot && n <= f.seq:
		return n, time.Time{}, at, true
	case time.Since(at) < KeepFeedResume:
		return 0, at.Add(-feedOverlap), at, true
	}
	return 0, time.Time{}, time.Time{}, false
}

// KeepFeedResume is how old a position may be and still resume on
// another daemon: the tombstones' age, less a day's margin.
const KeepFeedResume = 29 * 24 * time.Hour

// watermark is the store's time up to which the index has every change.
// Caller holds f.mu.
func (f *feed) watermark() time.Time {
	if !f.polled.IsZero() {
		return f.polled
	}
	return time.Now()
}

// pageCursor is the cursor of the page after a session last active at at.
func pageCursor(at time.Time, id string) string {
	return strconv.FormatInt(at.UnixNano(), 10) + "." + id
}

// pageAfter is where a page starts: after the session at, id.
type pageAfter struct {
	at time.Time
	id string
}

// parsePageCursor reads a page's cursor ("" for the first page).
func parsePageCursor(s string) (*pageAfter, error) {
	if s == "" {
		return nil, nil
	}
	ns, id, ok := strings.Cut(s, ".")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || id == "" {
		return nil, wire.Errorf(wire.CodeBadRequest, "cursor %q is not a feed page's next", s)
	}
	return &pageAfter{at: time.Unix(0, n), id: id}, nil
}
