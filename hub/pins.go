package hub

import (
	"context"
	"errors"
	"sync"

	"albedo/db"
	"albedo/hub/access"
	"albedo/wire"
)

// Pins: the sessions a person keeps at the top of their list, on every
// device (db/pins.go). The feed marks them (FeedItem.Pinned) and its
// first page holds them all, however old; a pin or an unpin says the
// session again in the feeds that show it.

// Pin pins session for p (pin true) or unpins it.
func (h *Hub) Pin(ctx context.Context, p access.Principal, session string, pin bool) error {
	who, err := readerOf(p)
	if err != nil {
		return err
	}
	if _, err := h.db.Session(ctx, session); err != nil {
		return wireErr(err)
	}
	_, err = h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		if pin {
			return tx.Pin(ctx, who, session)
		}
		return tx.Unpin(ctx, who, session)
	})
	if errors.Is(err, db.ErrTooMany) {
		return wire.Errorf(wire.CodeTooMany, "%d sessions are pinned already, the most one person may pin: unpin one first", wire.MaxPins)
	}
	if err != nil {
		return wireErr(err)
	}
	h.pins.forget(who)
	h.feed.touch(session)
	return nil
}

// Pinned lists the sessions p pinned, the first pinned first.
func (h *Hub) Pinned(ctx context.Context, p access.Principal) ([]string, error) {
	who, err := readerOf(p)
	if err != nil {
		return nil, err
	}
	ids, err := h.db.PinsOf(ctx, who)
	return ids, wireErr(err)
}

// pinCache keeps each person's pins as last read, for the feed's items:
// read once per person, forgotten when they change (here, or on another
// node: pinsElsewhere).
type pinCache struct {
	mu sync.Mutex
	m  map[string]map[string]bool
}

// maxPinCache bounds the people whose pins are kept.
const maxPinCache = 10000

// of returns reader's pins, reading them when they are not kept.
func (c *pinCache) of(ctx context.Context, d *db.DB, reader string) map[string]bool {
	c.mu.Lock()
	pins, ok := c.m[reader]
	c.mu.Unlock()
	if ok || reader == "" {
		return pins
	}
	ids, err := d.PinsOf(ctx, reader)
	if err != nil {
		return nil // not kept: read again next time
	}
	pins = make(map[string]bool, len(ids))
	for _, id := range ids {
		pins[id] = true
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxPinCache {
		c.m = map[string]map[string]bool{} // bounded: the rest are read again
	}
	c.m[reader] = pins
	c.mu.Unlock()
	return pins
}

// forget drops reader's pins, read again at their next need.
func (c *pinCache) forget(reader string) {
	c.mu.Lock()
	delete(c.m, reader)
	c.mu.Unlock()
}
