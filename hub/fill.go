package hub

import (
	"context"
	"encoding/json"
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

// fillOne serves the first ready cursor; more is false when none was ready.
func (c *Conn) fillOne(ctx context.Context, buf []byte) (_ []byte, more bool, _ error) {
	c.mu.Lock()
	if len(c.ready) == 0 {
		c.mu.Unlock()
		return buf, false, nil
	}
	s := c.ready[0]
	c.ready[0] = nil
	c.ready = c.ready[1:]
	s.queued = false
	if s.removed {
		c.mu.Unlock()
		return buf, true, nil
	}
	gen, next, reset := s.gen, s.next, s.reset
	wantStatus, wantPresence := s.status, s.presence
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
	c.mu.Unlock()

	// Events from next on: the ring if it has them, else a database page.
	h, ch := c.hub, s.ch
	page := h.opts.PageSize
	ch.mu.Lock()
	head := ch.head
	entries, fromRing := ch.ring.from(next, page, c.scratch[:0])
	var status, presence []byte
	if wantStatus {
		status, _ = json.Marshal(ch.statusPush())
	}
	if wantPresence {
		presence = ch.presenceFrame()
	}
	ch.mu.Unlock()
	if !fromRing && next <= head {
		evs, err := h.db.EventsAfter(ctx, ch.id, next-1, page)
		if err != nil {
			return buf, false, fmt.Errorf("page %s after %d: %w", ch.id, next-1, err)
		}
		for _, e := range evs {
			entries = append(entries, ch.frame(e))
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if s.removed || s.gen != gen {
		// Re-positioned or dropped while we read: what we read is stale, and
		// the new position has queued itself.
		return buf, true, nil
	}
	if reset != nil {
		buf = appendFrame(buf, reset)
	}
	for _, e := range entries {
		buf = appendFrame(buf, e.frame)
		if e.turnEnd != "" {
			s.lastEnded = e.turnEnd
		}
	}
	s.next += int64(len(entries))
	clear(entries) // drop references to frames the ring may evict
	c.scratch = entries[:0]
	if status != nil {
		buf = appendFrame(buf, status)
	}
	if presence != nil {
		buf = appendFrame(buf, presence)
	}
	if s.textTurn != "" && (len(s.text) > 0 || s.textFull) {
		if s.textTurn != s.lastEnded {
			op := wire.PushDelta
			if s.textFull {
				op = wire.PushPartial
			}
			b, _ := json.Marshal(wire.TextPush{Op: op, Session: ch.id, TurnID: s.textTurn, Text: string(s.text)})
			buf = appendFrame(buf, b)
		}
		s.text, s.textFull = nil, false
	}
	if s.next <= head {
		c.markReady(s) // more to page through: back of the line
	}
	return buf, true, nil
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
