package hub

import (
	"context"
	"fmt"
	"time"

	"albedo/api/wire"
)

// Fill appends to buf the frames the connection should write next,
// separated by '\n', stopping once buf holds about limit bytes, and returns
// it. It writes queued replies first, then serves ready cursors in turn, at
// most one page of events each per pass so that a busy session cannot starve
// the quiet ones. An empty result means there is nothing to write until the
// next Wake. Only the connection's writer goroutine may call Fill.
func (c *Conn) Fill(ctx context.Context, buf []byte, limit int) ([]byte, error) {
	c.mu.Lock()
	for _, r := range c.replies {
		buf = appendFrame(buf, r)
	}
	c.replies = c.replies[:0]
	c.mu.Unlock()

	for len(buf) < limit {
		var err error
		var more bool
		buf, more, err = c.fillOne(ctx, buf)
		if err != nil {
			return buf, err
		}
		if !more {
			break
		}
	}
	return buf, nil
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

// fillOne serves the first ready cursor; more is false when none was ready.
func (c *Conn) fillOne(ctx context.Context, buf []byte) (_ []byte, more bool, _ error) {
	p, wantStatus, wantPresence, ok := c.takeReady()
	if !ok {
		return buf, false, nil
	}
	if p.s == nil {
		return buf, true, nil // removed while it waited
	}
	if err := c.read(ctx, &p, wantStatus, wantPresence); err != nil {
		return buf, false, err
	}
	return c.write(buf, &p), true, nil
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
	s.reset, s.status = nil, false
	if wantPresence {
		s.presence, s.presenceAt = false, time.Now()
	}
	return p, wantStatus, wantPresence, true
}

// read fills p with the cursor's events from p.next on (the ring if it has
// them, else a database page) and the status and presence due. No lock is
// held while the database is read.
func (c *Conn) read(ctx context.Context, p *pass, wantStatus, wantPresence bool) error {
	h, ch := c.hub, p.s.ch
	page := h.opts.PageSize
	ch.mu.Lock()
	p.head = ch.head
	var fromRing bool
	p.entries, fromRing = ch.ring.from(p.next, page, c.scratch[:0])
	if wantStatus {
		p.status = wire.Encode(ch.statusPush())
	}
	if wantPresence {
		p.presence = ch.presenceFrame()
	}
	ch.mu.Unlock()
	if !fromRing && p.next <= p.head {
		evs, err := h.db.EventsAfter(ctx, ch.id, p.next-1, page)
		if err != nil {
			return fmt.Errorf("page %s after %d: %w", ch.id, p.next-1, err)
		}
		for _, e := range evs {
			p.entries = append(p.entries, ch.frame(e))
		}
	}
	return nil
}

// write appends what p read to buf and moves the cursor on, unless the
// cursor changed meanwhile.
func (c *Conn) write(buf []byte, p *pass) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := p.s
	if s.removed || s.gen != p.gen {
		// Re-positioned or dropped while we read: what we read is stale, and
		// the new position has queued itself.
		return buf
	}
	if p.reset != nil {
		buf = appendFrame(buf, p.reset)
	}
	for _, e := range p.entries {
		buf = appendFrame(buf, e.frame)
		if e.turnEnd != "" {
			s.lastEnded = e.turnEnd
		}
	}
	s.next += int64(len(p.entries))
	clear(p.entries) // drop references to frames the ring may evict
	c.scratch = p.entries[:0]
	if p.status != nil {
		buf = appendFrame(buf, p.status)
	}
	if p.presence != nil {
		buf = appendFrame(buf, p.presence)
	}
	buf = c.appendText(buf, s)
	if s.next <= p.head {
		c.markReady(s) // more to page through: back of the line
	}
	return buf
}

// appendText appends the cursor's pending streaming text (a partial or a
// delta) unless its turn has already ended for this cursor. Caller holds
// c.mu.
func (c *Conn) appendText(buf []byte, s *sub) []byte {
	if s.textTurn == "" || (len(s.text) == 0 && !s.textFull) {
		return buf
	}
	if s.textTurn != s.lastEnded {
		op := wire.PushDelta
		if s.textFull {
			op = wire.PushPartial
		}
		buf = appendFrame(buf, wire.Encode(wire.TextPush{Op: op, Session: s.ch.id, TurnID: s.textTurn, Text: string(s.text)}))
	}
	s.text, s.textFull = nil, false
	return buf
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
