package hub

import (
	"context"
	"fmt"
	"time"

	"albedo/wire"
)

// Fill appends to buf the frames the connection should write next,
// separated by '\n', and returns it. It takes queued replies first (a
// batch that cannot hold them all holds replies only), then serves ready
// cursors in turn, at most one page of events each per pass so that a busy
// session cannot starve the quiet ones. A frame joins the batch only if the
// batch stays within limit bytes; a frame larger than limit goes alone. An
// empty result means there is nothing to write until the next wake
// (OnWake). Only the connection's writer goroutine may call Fill.
func (c *Conn) Fill(ctx context.Context, buf []byte, limit int) ([]byte, error) {
	buf, all := c.takeReplies(buf, limit)
	if !all {
		return buf, nil // the rest of the replies first, in the next batch
	}
	buf = c.takeSessionsPush(buf, limit)
	buf = c.fillFeed(ctx, buf, limit)
	for len(buf) < limit {
		var err error
		var more bool
		buf, more, err = c.fillOne(ctx, buf, limit)
		if err != nil {
			return buf, err
		}
		if !more {
			break
		}
	}
	return buf, nil
}

// takeReplies moves queued replies to buf while they fit under limit, and
// says whether it took them all; the rest stay queued, first in line for
// the next Fill. Taking some makes room for a reader waiting in AwaitRoom.
func (c *Conn) takeReplies(buf []byte, limit int) (_ []byte, all bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for ; n < len(c.replies) && fits(buf, c.replies[n], limit); n++ {
		buf = appendFrame(buf, c.replies[n])
		c.replyBytes -= len(c.replies[n])
	}
	all = n == len(c.replies)
	if n == 0 {
		return buf, all
	}
	left := copy(c.replies, c.replies[n:])
	clear(c.replies[left:])
	c.replies = c.replies[:left]
	select {
	case c.room <- struct{}{}:
	default:
	}
	return buf, all
}

func appendFrame(buf, frame []byte) []byte {
	if len(buf) > 0 {
		buf = append(buf, '\n')
	}
	return append(buf, frame...)
}

// pass is one turn of a ready cursor in Fill: what was due when it was
// taken from the ready list, and what was read for it.
type pass struct {
	s        *sub
	gen      uint64 // s.gen when taken: a change meanwhile voids the pass
	next     int64
	reset    []byte
	head     int64
	entries  []entry
	status   []byte
	presence []byte
}

// fillOne serves the first ready cursor, with events up to what buf has
// room for under limit (at least one); more is false when none was ready
// or the batch is full.
func (c *Conn) fillOne(ctx context.Context, buf []byte, limit int) (_ []byte, more bool, _ error) {
	p, wantStatus, wantPresence, ok := c.takeReady()
	if !ok {
		return buf, false, nil
	}
	if p.s == nil {
		return buf, true, nil // removed while it waited
	}
	if err := c.read(ctx, &p, wantStatus, wantPresence, max(limit-len(buf), 1)); err != nil {
		return buf, false, err
	}
	buf, full := c.write(buf, &p, limit)
	return buf, !full, nil
}

// takeReady takes the first ready cursor off the list, with what is due
// for it. A removed cursor comes back as a pass with no sub.
func (c *Conn) takeReady() (p pass, wantStatus, wantPresence, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.ready) == 0 {
		return pass{}, false, false, false
	}
	s := c.ready[0]
	c.ready[0] = nil
	c.ready = c.ready[1:]
	s.queued = false
	if s.removed {
		return pass{}, false, false, true
	}
	p = pass{s: s, gen: s.gen, next: s.next, reset: s.reset}
	wantStatus, wantPresence = s.status, s.presence
	if wantPresence && !s.presenceAt.IsZero() && time.Since(s.presenceAt) < presenceEvery {
		// Presence is state: under a storm of joins one push per interval
		// carries the latest list. Come back when the interval is over.
		wantPresence = false
		c.wakeLater(s, presenceEvery-time.Since(s.presenceAt))
	}
	if wantPresence && s.viewers {
		// The status's count of viewers changed with the people: both
		// leave in one write, and wait together for the interval.
		wantStatus = true
	}
	s.reset, s.status = nil, false
	if wantPresence {
		s.presence, s.viewers, s.presenceAt = false, false, time.Now()
	}
	return p, wantStatus, wantPresence, true
}

// read fills p with the cursor's events from p.next on (the ring if it has
// them, else a database page), at most a page and about maxBytes of them,
// and the status and presence due. No lock is held while the database is
// read.
func (c *Conn) read(ctx context.Context, p *pass, wantStatus, wantPresence bool, maxBytes int) error {
	h, ch := c.hub, p.s.ch
	page := h.opts.PageSize
	ch.mu.Lock()
	p.head = ch.head
	epoch := ch.epoch
	var fromRing bool
	p.entries, fromRing = ch.ring.from(p.next, page, maxBytes, c.scratch[:0])
	if wantStatus {
		p.status = ch.statusFrame()
	}
	if wantPresence {
		p.presence = ch.presenceFrame()
	}
	ch.mu.Unlock()
	if !fromRing && p.next <= p.head {
		evs, err := h.eventsAfter(ctx, ch, p.next-1, page, maxBytes)
		if err != nil {
			return fmt.Errorf("page %s after %d: %w", ch.id, p.next-1, err)
		}
		h.stats.pageReads.Add(1)
		for _, e := range evs {
			p.entries = append(p.entries, ch.frame(e))
		}
		ch.backfill(epoch, p.entries)
	}
	return nil
}

// write appends what p read to buf, as much of it as fits under limit,
// and moves the cursor on by what it wrote. What does not fit stays due,
// the cursor goes to the back of the line, and full says the batch is
// done.
func (c *Conn) write(buf []byte, p *pass, limit int) (_ []byte, full bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := p.s
	if s.removed || s.gen != p.gen {
		// Re-positioned or dropped while we read: what we read is stale, and
		// the new position has queued itself.
		return buf, false
	}
	defer func() {
		clear(p.entries) // drop references to frames the ring may evict
		c.scratch = p.entries[:0]
	}()
	if p.reset != nil && !fits(buf, p.reset, limit) {
		// Nothing of this pass may go before its reset: all of it waits.
		s.reset, s.status = p.reset, s.status || p.status != nil
		if p.presence != nil {
			s.presence, s.presenceAt = true, time.Time{}
		}
		c.markReady(s)
		return buf, true
	}
	if p.reset != nil {
		buf = appendFrame(buf, p.reset)
	}
	written := 0
	for _, e := range p.entries {
		if !fits(buf, e.frame, limit) {
			break
		}
		buf = appendFrame(buf, e.frame)
		if e.turnEnd != "" {
			s.lastEnded = e.turnEnd
		}
		written++
	}
	s.next += int64(written)
	c.hub.stats.deliveries.Add(int64(written))
	buf = c.appendDue(buf, s, p, limit)
	// What did not fit makes the batch full; a presence push that waits
	// for its interval (deferred: the timer brings it back) does not. An
	// empty page while events are due (the session being deleted) ends
	// the batch too, rather than reading the same empty page again.
	full = written < len(p.entries) || s.status || s.presence && !s.deferred || s.textReady() ||
		len(p.entries) == 0 && s.next <= p.head
	if full || s.next <= p.head {
		c.markReady(s) // more to page through, or a push that did not fit: back of the line
	}
	return buf, full
}

// appendDue appends the status, presence and streaming text due to s, each
// only if it fits under limit; what does not fit stays due. Caller holds
// c.mu.
func (c *Conn) appendDue(buf []byte, s *sub, p *pass, limit int) []byte {
	if p.status != nil {
		if fits(buf, p.status, limit) {
			buf = appendFrame(buf, p.status)
		} else {
			s.status = true
		}
	}
	if p.presence != nil {
		if fits(buf, p.presence, limit) {
			buf = appendFrame(buf, p.presence)
		} else {
			s.presence, s.presenceAt = true, time.Time{}
		}
	}
	return c.appendText(buf, s, limit)
}

// fits says whether frame may join buf under limit: it fits, or buf is
// empty (a frame larger than limit goes alone).
func fits(buf, frame []byte, limit int) bool {
	return len(buf) == 0 || len(buf)+1+len(frame) <= limit
}

// appendText appends the cursor's pending streaming text (a partial or a
// delta) unless its turn has already ended for this cursor, or it does not
// fit under limit, or the cursor has not been written the events up to the
// head the text came at, which hold its turn's start (then it stays
// pending: within a session, pushes follow the order things happened, and
// a cursor catching up gets the text after the turn it belongs to).
// Caller holds c.mu.
func (c *Conn) appendText(buf []byte, s *sub, limit int) []byte {
	if s.textTurn == "" || !s.textReady() {
		return buf // none, or its turn's start is not written yet: the events that bring it wake the cursor
	}
	if s.textTurn != s.lastEnded {
		op := wire.PushDelta
		if s.textFull {
			op = wire.PushPartial
		}
		frame := wire.Encode(wire.TextPush{Op: op, Session: s.ch.id, TurnID: s.textTurn, Text: string(s.text)})
		if !fits(buf, frame, limit) {
			return buf
		}
		buf = appendFrame(buf, frame)
	}
	s.text, s.textFull = nil, false
	return buf
}

// textReady says whether s has streaming text to write now: some, and the
// cursor past the head it came at. Caller holds c.mu.
func (s *sub) textReady() bool {
	return (len(s.text) > 0 || s.textFull) && s.next > s.textAfter
}

// presenceEvery is the shortest time between two presence pushes to one
// subscription.
const presenceEvery = 250 * time.Millisecond

// wakeLater marks s ready again after d (one pending timer per
// connection). Caller holds c.mu.
func (c *Conn) wakeLater(s *sub, d time.Duration) {
	s.deferred = true
	if c.timer != nil {
		return
	}
	c.timer = time.AfterFunc(d, func() {
		c.mu.Lock()
		c.timer = nil
		for _, x := range c.subs {
			if x.deferred {
				x.deferred = false
				c.markReady(x)
			}
		}
		c.mu.Unlock()
		c.signal()
	})
}
