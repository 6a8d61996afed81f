package ws

import (
	"context"
	"testing"
	"time"

	"albedo/wire"
)

// A pool worker never holds the others' writes while one peer reads
// nothing: with one worker and a write timeout far beyond the test's
// deadlines, a reader that stalls must not delay another's events. Without
// the worker leaving the pool when its write would wait, the fast reader
// gets nothing until the stalled one is cut, a minute later.
func TestWSPoolWorkerLeavesAStalledReader(t *testing.T) {
	e := newEnv(t, Options{WriteTimeout: time.Minute})
	e.srv.writers.max = 1
	s := e.create("s")
	e.dialRaw(wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch}) // reads its hello reply, then nothing

	fast := e.dial(true)
	fast.Hello(wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})

	floodPastAStalledReader(e, fast, 120, 64<<10) // 7.5 MiB, echoed: beyond any socket buffer
}

// Bye's close handshakes wait for each peer; a worker leaves the pool
// before one, so peers that never answer do not hold another's bye. With
// one worker and eight silent peers, the bye of a reading client would
// otherwise wait about five seconds (coder/websocket's handshake timeout)
// for each silent peer before it in the queue.
func TestWSPoolByeDoesNotWaitOnSilentPeers(t *testing.T) {
	e := newEnv(t, Options{})
	e.srv.writers.max = 1
	for range 8 {
		e.dialRaw() // reads its hello reply, then nothing: never answers a close
	}
	fast := e.dial(true)
	fast.Hello()

	start := time.Now()
	byeDone := make(chan struct{})
	go func() {
		e.srv.Bye(context.Background(), wire.ByeShutdown, 0)
		close(byeDone)
	}()
	fast.Next(func(f wire.Frame) bool { return f.Op == wire.PushBye })
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the reading client's bye took %v", d)
	}
	select {
	case <-byeDone:
	case <-time.After(30 * time.Second):
		t.Fatal("Bye did not return")
	}
}

// Under a load that never lets the queue empty, the pool's queue stays
// bounded by the writers waiting, and a writer queued behind others is
// taken in its turn even though a new writer takes the next slot before
// every take.
func TestWriterPoolQueueIsBoundedAndFair(t *testing.T) {
	p := &writerPool{} // max 0: no worker starts; the test takes
	const conns = 1000
	ws := make([]*writer, conns)
	queuedAt := map[*writer]int{}
	for i := range ws {
		ws[i] = &writer{}
	}
	next := 0
	submitOne := func(step int) {
		for {
			w := ws[next%conns]
			next++
			if _, ok := queuedAt[w]; !ok {
				queuedAt[w] = step
				p.submit(w)
				return
			}
		}
	}
	for range conns / 2 {
		submitOne(0) // a backlog
	}
	maxWait := 0
	for step := 1; step <= 100_000; step++ {
		submitOne(step)
		w := p.take()
		if w == nil {
			t.Fatal("nothing to take with a backlog")
		}
		maxWait = max(maxWait, step-queuedAt[w])
		delete(queuedAt, w)
		if l := len(p.queue); l > 2*conns+64 || cap(p.queue) > 4*conns+128 {
			t.Fatalf("step %d: queue len %d cap %d for at most %d writers", step, l, cap(p.queue), conns)
		}
	}
	// Every other take is the queue's: a writer waits at most about twice
	// the backlog ahead of it.
	for _, at := range queuedAt {
		maxWait = max(maxWait, 100_000-at) // still waiting
	}
	if maxWait > 2*conns {
		t.Fatalf("a writer waited %d takes behind a backlog of %d", maxWait, conns/2)
	}
}
