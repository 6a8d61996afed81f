package hub

import (
	"fmt"
	"testing"

	"albedo/wire"
)

func ringEntry(off int64, size int) entry {
	return entry{offset: off, frame: make([]byte, size)}
}

// offsets lists what from(next, limit) serves, or nil if it cannot.
func offsets(r *ring, next int64, limit int) []int64 {
	es, ok := r.from(next, limit, 1<<30, nil)
	if !ok {
		return nil
	}
	var out []int64
	for _, e := range es {
		out = append(out, e.offset)
	}
	return out
}

func TestRingGrowsOnDemand(t *testing.T) {
	t.Parallel()
	r := newRing(256, 1<<20)
	if r.buf != nil {
		t.Fatalf("an unused ring holds a buffer of %d", len(r.buf))
	}
	r.push(ringEntry(1, 10))
	if len(r.buf) != ringFirstAlloc {
		t.Fatalf("after one push: buffer %d, want %d", len(r.buf), ringFirstAlloc)
	}
	for off := int64(2); off <= 600; off++ {
		r.push(ringEntry(off, 10))
	}
	if len(r.buf) != 256 || r.n != 256 || r.first() != 345 || r.last() != 600 {
		t.Fatalf("after 600: buffer %d, n %d, %d..%d", len(r.buf), r.n, r.first(), r.last())
	}
	if got := fmt.Sprint(offsets(&r, 400, 3)); got != "[400 401 402]" {
		t.Fatalf("from 400: %s", got)
	}
	if offsets(&r, 344, 1) != nil || offsets(&r, 601, 1) != nil {
		t.Fatalf("served offsets it does not hold")
	}
}

// Growth keeps the order when the oldest entries have wrapped around.
func TestRingGrowsAcrossWrap(t *testing.T) {
	t.Parallel()
	r := newRing(64, 100) // ten 10-byte frames at most
	for off := int64(1); off <= 100; off++ {
		r.push(ringEntry(off, 10))
		want := min(off, 10)
		if int64(r.n) != want || r.last() != off || r.first() != off-want+1 {
			t.Fatalf("after %d: n %d, %d..%d", off, r.n, r.first(), r.last())
		}
	}
	if len(r.buf) != 16 {
		t.Fatalf("the byte cap holds 10 entries; the buffer grew to %d", len(r.buf))
	}
	if got := fmt.Sprint(offsets(&r, 91, 100)); got != "[91 92 93 94 95 96 97 98 99 100]" {
		t.Fatalf("from 91: %s", got)
	}
	// Wrap, then grow: push a big-enough budget of small frames.
	r2 := newRing(32, 1<<20)
	for off := int64(1); off <= 8; off++ {
		r2.push(ringEntry(off, 1))
	}
	r2.dropOldest()
	r2.dropOldest()
	r2.dropOldest() // start is now 3 of 8
	for off := int64(9); off <= 20; off++ {
		r2.push(ringEntry(off, 1))
	}
	if got := fmt.Sprint(offsets(&r2, 4, 100)); got != "[4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20]" {
		t.Fatalf("after wrap and growth: %s", got)
	}
}

func TestRingRestartsOnAGapAndSizeZeroHoldsNothing(t *testing.T) {
	t.Parallel()
	r := newRing(16, 1<<20)
	for off := int64(1); off <= 5; off++ {
		r.push(ringEntry(off, 1))
	}
	r.push(ringEntry(9, 1))
	if r.n != 1 || r.first() != 9 {
		t.Fatalf("after a gap: n %d, first %d", r.n, r.first())
	}
	z := newRing(0, 1<<20)
	z.push(ringEntry(1, 1))
	if z.n != 0 || z.buf != nil {
		t.Fatalf("a size-0 ring kept an entry")
	}
}

// Events that came while nobody watched are read from the store once, by
// the first cursor that comes back behind them, not once by each: a crowd
// reattaching after a restart finds the event published meanwhile.
func TestCursorsBehindAnUnwatchedEventReadItOnce(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	epoch := mustCreate(t, h, "s").Epoch
	appendN(t, h, "s", 3) // nobody watches: no ring keeps them
	after := int64(1)
	for i := range 10 {
		r := newReader(t, h.Connect(ConnInfo{Name: "t"}))
		subscribe(r.c, wire.Sub{Session: "s", After: &after, Epoch: epoch})
		for want := after + 1; want <= 3; want++ {
			if f := r.next(t, isEvent); f.Event.Offset != want {
				t.Fatalf("cursor %d: offset %d, want %d", i, f.Event.Offset, want)
			}
		}
	}
	if n := h.Stats().PageReads; n != 1 {
		t.Fatalf("10 cursors behind the head read %d pages from the store, want 1", n)
	}
}
