package client

import (
	"testing"
	"time"
)

func TestBackoffBoundsDoubleToTheCap(t *testing.T) {
	t.Parallel()
	b := NewBackoff(BackoffOptions{})
	want := []time.Duration{250, 500, 1000, 2000, 4000, 5000, 5000}
	for n, w := range want {
		if got := b.Bound(n); got != w*time.Millisecond {
			t.Fatalf("bound %d = %s, want %s", n, got, w*time.Millisecond)
		}
	}
}

// Every delay lies in [0, bound]; delays are drawn, not fixed.
func TestBackoffIsFullJitter(t *testing.T) {
	t.Parallel()
	b := NewBackoff(BackoffOptions{First: 100 * time.Millisecond, Cap: time.Second})
	for n := range 50 {
		bound := b.Bound(b.Attempt())
		d := b.Next()
		if d < 0 || d > bound {
			t.Fatalf("attempt %d: delay %s outside [0, %s]", n, d, bound)
		}
	}
	b.Reset()
	if b.Attempt() != 0 || b.Bound(b.Attempt()) != 100*time.Millisecond {
		t.Fatalf("reset did not restart the schedule")
	}
}

// 200 clients losing the daemon at once spread their first attempts over
// the first jitter window instead of arriving together.
func TestBackoffSpreadsAThunderingHerd(t *testing.T) {
	t.Parallel()
	const clients, buckets = 200, 10
	var hist [buckets]int
	for range clients {
		d := NewBackoff(BackoffOptions{}).Next()
		if d > 250*time.Millisecond {
			t.Fatalf("first delay %s over 250ms", d)
		}
		hist[min(int(d*buckets/(250*time.Millisecond)), buckets-1)]++
	}
	for i, n := range hist {
		// Uniform would put 20 in each; a bucket with none or with a third
		// of everyone means no spread.
		if n == 0 || n > clients/3 {
			t.Fatalf("first attempts per 25ms window: %v (window %d)", hist, i)
		}
	}
}
