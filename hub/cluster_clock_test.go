package hub

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"albedo/db/pgtest"
)

// lockedBuffer is a bytes.Buffer a logger and a test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A node measures its clock against PostgreSQL's (here the same machine's:
// well under a second), and warns once when they differ by more than a
// second, and once more when they agree again.
func TestClockIsComparedWithTheStores(t *testing.T) {
	t.Parallel()
	var logged lockedBuffer
	h, err := Open(context.Background(), pgtest.Shared(t).Database(t), Options{Node: "a"}, slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	if h.checkClock(h.db.ClockSkew, false) {
		t.Fatalf("one machine's clock differs from itself: %v", h.Stats().ClockSkew)
	}
	if st := h.Stats(); !st.ClockMeasured || st.ClockSkew.Abs() > time.Second {
		t.Fatalf("measured %v (%v)", st.ClockSkew, st.ClockMeasured)
	}
	ahead := func(d time.Duration) func(context.Context) (time.Duration, time.Duration, error) {
		return func(context.Context) (time.Duration, time.Duration, error) { return d, time.Millisecond, nil }
	}
	warned := h.checkClock(ahead(3*time.Second), false)
	warned = h.checkClock(ahead(3*time.Second), warned)
	if !warned || strings.Count(logged.String(), "clock and the store's differ") != 1 || !strings.Contains(logged.String(), "ahead_by=3s") {
		t.Fatalf("3 s ahead, twice: warned %v, log:\n%s", warned, logged.String())
	}
	if st := h.Stats(); st.ClockSkew != 3*time.Second {
		t.Fatalf("skew %v, want 3s", st.ClockSkew)
	}
	if h.checkClock(ahead(10*time.Millisecond), warned) || !strings.Contains(logged.String(), "agrees with the store's again") {
		t.Fatalf("back in step: log:\n%s", logged.String())
	}
}
