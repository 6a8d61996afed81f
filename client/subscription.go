package client

import (
	"context"
	"sync"

	"albedo/wire"
)

// Item is one push of a subscription, decoded, and as received. Op says
// which field of the Frame holds it: Event, Reset, Text (partial and
// delta), Status or Presence.
type Item struct {
	wire.Frame
	Raw []byte
}

// Cursor is a position in a session's log. The zero Cursor asks for a fresh
// view: a reset and the last Window events.
type Cursor struct {
	Epoch  string
	Offset int64 // the last event already seen
	Window *int  // events to send after a reset (default 100)
}

// Subscription is one session's channel on a Stream. Next may be called from
// one goroutine at a time; Cursor and Close from any.
type Subscription struct {
	stream  *Stream
	session string

	mu         sync.Mutex
	background bool   // not one of the session's viewers (Watch)
	cur        Cursor // epoch and last offset delivered (or queued)
	known      bool   // cur.Epoch came from the daemon
	queue      []Item
	notify     chan struct{}
	err        error // terminal
}

// Session is the subscription's session id.
func (s *Subscription) Session() string { return s.session }

// Cursor returns the position after the last event queued for Next.
func (s *Subscription) Cursor() Cursor {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Next returns the next push: events (each once, in order, contiguous),
// resets (drop your view: events after Before follow), partials and deltas
// of a streaming reply, status and presence. Reconnections are invisible
// here. It returns an error only when the subscription ends: ErrUnavailable
// once the stream's budget is spent, a *wire.Error from the daemon
// (not_found: the session was deleted; forbidden: this token's access to
// it was taken back), ErrStreamClosed, or ctx's error.
func (s *Subscription) Next(ctx context.Context) (Item, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			it := s.queue[0]
			s.queue[0] = Item{}
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return it, nil
		}
		err := s.err
		s.mu.Unlock()
		if err != nil {
			return Item{}, err
		}
		select {
		case <-s.notify:
		case <-ctx.Done():
			return Item{}, ctx.Err()
		}
	}
}

// Watch makes this connection one of the session's viewers (counted in its
// status, listed in its presence), or, off, a subscriber in the background
// that gets everything but is not counted: a client that follows many
// sessions watches the one its user looks at. Subscribe starts watching;
// SubscribeBackground does not. The choice outlives reconnections.
func (s *Subscription) Watch(on bool) {
	s.mu.Lock()
	changed := s.background == on
	s.background = !on
	s.mu.Unlock()
	if changed {
		s.stream.watch(s, on)
	}
}

// Typed tells the session's watchers that this client's user is writing
// a message in it (presence marks them typing for wire.TypingMS). It is
// dropped while disconnected: a mark that late would say nothing true.
func (s *Subscription) Typed() { s.stream.typed(s) }

// Close ends the subscription.
func (s *Subscription) Close() { s.stream.unsubscribe(s) }

// push delivers a push, dropping events at or below the cursor. It returns
// false if an event leaves a gap, which means this client lost track: the
// caller re-subscribes.
func (s *Subscription) push(it Item) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return true
	}
	switch it.Op {
	case wire.PushEvent:
		if it.Event == nil || it.Event.Offset <= s.cur.Offset {
			return true // a replay of what we have: drop
		}
		if it.Event.Offset != s.cur.Offset+1 {
			return false
		}
		s.cur.Offset = it.Event.Offset
	case wire.PushReset:
		s.cur.Epoch, s.cur.Offset, s.known = it.Reset.Epoch, it.Reset.Before, true
	}
	s.queue = append(s.queue, it)
	s.wake()
	return true
}

// end terminates the subscription with err.
func (s *Subscription) end(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.wake()
}

func (s *Subscription) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// sub is the sub body that resumes this subscription.
func (s *Subscription) sub() wire.Sub {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := wire.Sub{Session: s.session, Window: s.cur.Window}
	if s.background {
		b.Watch = new(false)
	}
	if s.cur.Epoch != "" {
		after := s.cur.Offset
		b.After, b.Epoch = &after, s.cur.Epoch
	}
	return b
}

// replied records the daemon's answer to a sub.
func (s *Subscription) replied(r wire.SubReply) {
	if r.Error != nil {
		s.end(r.Error)
		return
	}
	s.mu.Lock()
	if !r.Recovered {
		// A reset push follows and sets the cursor.
		s.mu.Unlock()
		return
	}
	s.cur.Epoch, s.known = r.Epoch, true
	s.mu.Unlock()
}
