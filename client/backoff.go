package client

import (
	"math/rand/v2"
	"time"
)

// BackoffOptions shape reconnect delays: full-jitter exponential backoff,
// delay n drawn uniformly from [0, min(Cap, First·2ⁿ)].
type BackoffOptions struct {
	First time.Duration // upper bound of the first delay (250 ms)
	Cap   time.Duration // upper bound of any delay (5 s)
}

// Backoff yields successive delays. Not safe for concurrent use.
type Backoff struct {
	opts    BackoffOptions
	attempt int
	rand    func(int64) int64
}

// NewBackoff returns a schedule with the defaults filled in.
func NewBackoff(o BackoffOptions) *Backoff {
	if o.First <= 0 {
		o.First = 250 * time.Millisecond
	}
	if o.Cap <= 0 {
		o.Cap = 5 * time.Second
	}
	if o.Cap < o.First {
		o.Cap = o.First
	}
	return &Backoff{opts: o, rand: rand.Int64N}
}

// Bound is the upper bound of the delay of attempt n (0-based).
func (b *Backoff) Bound(n int) time.Duration {
	d := b.opts.First
	for range n {
		d *= 2
		if d >= b.opts.Cap {
			return b.opts.Cap
		}
	}
	return d
}

// Next returns the next delay and advances the schedule.
func (b *Backoff) Next() time.Duration {
	bound := b.Bound(b.attempt)
	b.attempt++
	return time.Duration(b.rand(int64(bound) + 1))
}

// Attempt is how many delays Next has handed out since the last Reset.
func (b *Backoff) Attempt() int { return b.attempt }

// Reset starts the schedule over, after a success.
func (b *Backoff) Reset() { b.attempt = 0 }
