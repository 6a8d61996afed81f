package hub

import (
	"context"
	"sync"
	"testing"
	"time"

	"albedo/hub/peer"
)

// Close waits for the goroutines the hub started with goTracked, with the
// store still open for them, and starts none once it has begun.
func TestCloseWaitsForTrackedGoroutines(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	mustCreate(t, h, "s")
	release := make(chan struct{})
	read := make(chan error, 1)
	if !h.goTracked(func() {
		<-h.ctx.Done() // Close has begun
		<-release
		_, err := h.db.Session(context.Background(), "s")
		read <- err
	}) {
		t.Fatal("goTracked started nothing on an open hub")
	}
	closed := make(chan error, 1)
	go func() { closed <- h.Close(context.Background()) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.trackMu.Lock()
		closing := h.closing
		h.trackMu.Unlock()
		if closing {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Close never stopped tracking")
		}
		time.Sleep(time.Millisecond) // polling under a deadline
	}
	if h.goTracked(func() { t.Error("a goroutine started after Close began") }) {
		t.Fatal("goTracked started a goroutine after Close began")
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a tracked goroutine ran", err)
	default:
	}
	close(release)
	if err := <-read; err != nil {
		t.Fatalf("the store, read by a tracked goroutine during Close: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

// A flood of events notices that carry no events reads the session's
// settings again on one goroutine at a time, not one per notice.
func TestEventsNoticesReadSettingsOneAtATime(t *testing.T) {
	t.Parallel()
	h, _ := watchedHub(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2000 {
				h.onEvents(peer.Events{Node: "n2", Session: "s", First: 1, Last: 1})
			}
		}()
	}
	wg.Wait()
	r := &h.settingsReads
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		running, pending := r.running, len(r.pending)
		r.mu.Unlock()
		if pending > 1 {
			t.Fatalf("%d sessions pending, for one session", pending)
		}
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reader of settings never finished")
		}
		time.Sleep(time.Millisecond) // polling under a deadline
	}
	if n := r.mostActive.Load(); n != 1 {
		t.Fatalf("%d readers of settings ran at once, want 1", n)
	}
}
