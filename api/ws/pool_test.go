package ws

import (
	"context"
	"math/rand/v2"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

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
	e.dialRawBuf(4096, wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch}) // reads its hello reply, then nothing
	e.onlyConn().lean.Conn.(*net.TCPConn).SetWriteBuffer(4096)

	fast := e.dial(true)
	fast.Hello(wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})

	floodPastAStalledReader(e, fast, 16, 16<<10) // 256 KiB, echoed: far beyond the stalled reader's small buffers
}

// Bye's close handshakes wait for each peer; a worker leaves the pool
// before one, so peers that never answer do not hold another's bye. With
// one worker and eight silent peers, the bye of a reading client would
// otherwise wait about five seconds (coder/websocket's handshake timeout)
// for each silent peer before it in the queue.
func TestWSPoolByeDoesNotWaitOnSilentPeers(t *testing.T) {
	e := newEnv(t, Options{})
	e.srv.writers.max = 1
	var silent []*websocket.Conn
	for range 8 {
		silent = append(silent, e.dialRaw()) // reads its hello reply, then nothing: never answers a close
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
	for _, c := range silent {
		c.CloseNow() // Bye's handshakes with them end now, not at their timeout
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
	t.Parallel()
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

// poolRig runs a writerPool whose workers run stand-in writers: each run
// checks that no other goroutine runs its writer, counts the runs on
// workers still in the pool, and does what the test's behave says (leave
// the pool, wait, lend). A writer is submitted only while it is neither
// queued nor running, as writer.kick does with its running flag.
type poolRig struct {
	t       *testing.T
	p       *writerPool
	state   map[*writer]*rigWriter // read-only once made
	writers []*writer
	behave  func(w *writer)

	inPool  atomic.Int32 // runs on workers that have not left
	maxIn   atomic.Int32
	maxLent atomic.Int32
	ran     atomic.Int64
	pending sync.WaitGroup // submitted runs not finished
}

type rigWriter struct {
	busy    atomic.Bool // queued or running: kick's running flag
	running atomic.Bool
}

func newPoolRig(t *testing.T, max, writers int) *poolRig {
	r := &poolRig{t: t, p: &writerPool{max: max}, state: map[*writer]*rigWriter{}, behave: func(*writer) {}}
	for range writers {
		w := &writer{}
		r.writers = append(r.writers, w)
		r.state[w] = &rigWriter{}
	}
	r.p.run = r.run
	return r
}

func (r *poolRig) run(w *writer) {
	st := r.state[w]
	if !st.running.CompareAndSwap(false, true) {
		r.t.Error("two goroutines run one writer")
	}
	raiseTo(&r.maxIn, r.inPool.Add(1))
	r.behave(w)
	if !*w.left {
		r.inPool.Add(-1)
	}
	r.ran.Add(1)
	st.running.Store(false)
	st.busy.Store(false)
	r.pending.Done()
}

// leave is the pool's leave, as a run about to wait for its peer calls it.
// The run stops counting itself in the pool first: the pool's leave
// starts another worker, whose run may count itself before leave
// returns, and the rig would see one run too many at once.
func (r *poolRig) leave(w *writer) {
	if w.left != nil && !*w.left {
		r.inPool.Add(-1)
	}
	r.p.leave(w)
}

// kick submits w unless it is queued or running already.
func (r *poolRig) kick(w *writer) bool {
	if !r.state[w].busy.CompareAndSwap(false, true) {
		return false
	}
	r.pending.Add(1)
	r.p.submit(w)
	return true
}

func (r *poolRig) lend() {
	r.p.lend()
	r.p.mu.Lock()
	n := int32(r.p.lent)
	r.p.mu.Unlock()
	raiseTo(&r.maxLent, n)
}

// raiseTo makes m at least n.
func raiseTo(m *atomic.Int32, n int32) {
	for old := m.Load(); n > old && !m.CompareAndSwap(old, n); old = m.Load() {
	}
}

// kickFromMany kicks random writers from g goroutines, n times each, and
// returns how many kicks queued a run.
func (r *poolRig) kickFromMany(g, n int, also func(rnd *rand.Rand)) int64 {
	var queued atomic.Int64
	var wg sync.WaitGroup
	for i := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(i), 1))
			for range n {
				if r.kick(r.writers[rnd.IntN(len(r.writers))]) {
					queued.Add(1)
				}
				if also != nil {
					also(rnd)
				}
				if rnd.IntN(8) == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	wg.Wait()
	return queued.Load()
}

// settle waits for every queued run, then checks that the pool is empty:
// no worker, no loan, nothing queued.
func (r *poolRig) settle(queued int64) {
	r.t.Helper()
	done := make(chan struct{})
	go func() { r.pending.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		r.t.Fatalf("%d of %d runs never happened", queued-r.ran.Load(), queued)
	}
	if r.ran.Load() != queued {
		r.t.Fatalf("%d runs for %d kicks that queued one", r.ran.Load(), queued)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.p.mu.Lock()
		workers, lent, next, queue := r.p.workers, r.p.lent, r.p.next, len(r.p.queue)-r.p.head
		r.p.mu.Unlock()
		if workers == 0 && lent == 0 && next == nil && queue == 0 {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("the pool did not empty: %d workers, %d lent, next %v, %d queued", workers, lent, next != nil, queue)
		}
		runtime.Gosched()
	}
}

// idle → queued → on a worker → idle, from many goroutines at once: every
// kick that queued a run gets exactly one, no writer runs on two
// goroutines, the pool never runs more than its size, and it ends with no
// goroutine.
func TestWriterPoolSubmitAndTakeStress(t *testing.T) {
	t.Parallel()
	r := newPoolRig(t, 3, 200)
	queued := r.kickFromMany(8, 3000, nil)
	r.settle(queued)
	if m := r.maxIn.Load(); m > 3 {
		t.Fatalf("%d runs at once on a pool of 3", m)
	}
}

// on a worker → left the pool: the worker that leaves starts a
// replacement, so that writers queued behind a peer that stalls still run.
// With one worker, a writer that queues fifty others, leaves, and waits
// for them to run waits for ever unless leave replaced it.
func TestWriterPoolLeaveStartsAReplacement(t *testing.T) {
	t.Parallel()
	r := newPoolRig(t, 1, 51)
	stalled, others := r.writers[0], r.writers[1:]
	allRan := make(chan struct{})
	var left atomic.Int32
	r.behave = func(w *writer) {
		if w != stalled {
			if left.Load() == 1 && r.ran.Load() == int64(len(others)-1) {
				close(allRan)
			}
			return
		}
		for _, o := range others {
			r.kick(o) // queued: the one worker is this one
		}
		left.Store(1)
		r.leave(w)
		select {
		case <-allRan:
		case <-time.After(10 * time.Second):
			t.Error("the writers behind one that left the pool never ran")
		}
	}
	r.kick(stalled)
	r.settle(int64(len(r.writers)))
}

// on a worker → left the pool, from many goroutines at once: runs that
// leave (a third) and then take their time never count against the
// pool's size, and every run happens once.
func TestWriterPoolLeaveStress(t *testing.T) {
	t.Parallel()
	r := newPoolRig(t, 2, 100)
	r.behave = func(w *writer) {
		if rand.IntN(3) == 0 {
			r.leave(w)
			for range 10 {
				runtime.Gosched() // the peer takes its time, off the pool
			}
		}
	}
	queued := r.kickFromMany(8, 2000, nil)
	r.settle(queued)
	if m := r.maxIn.Load(); m > 2 {
		t.Fatalf("%d runs on the pool at once, for a pool of 2", m)
	}
}

// A loan (lend … giveBack) raises the pool's size while a frame of others
// waits holding the lock a worker waits for: with one worker held by a
// writer that waits (without leaving), a writer queued after a lend runs.
func TestWriterPoolLoanRunsTheQueueBehindAHeldWorker(t *testing.T) {
	t.Parallel()
	r := newPoolRig(t, 1, 2)
	held, behind := r.writers[0], r.writers[1]
	ranBehind := make(chan struct{})
	r.behave = func(w *writer) {
		if w == behind {
			close(ranBehind)
			return
		}
		r.kick(behind) // queued: the one worker is held
		r.lend()       // the frame of others that the held worker waits on
		select {
		case <-ranBehind:
		case <-time.After(10 * time.Second):
			t.Error("the writer queued behind a held worker never ran, with a worker lent")
		}
		r.p.giveBack()
	}
	r.kick(held)
	r.settle(2)
}

// Loans from many goroutines at once, beside kicks and leaves: the pool
// runs at most its size plus its loans, every run happens once, and once
// the loans are given back the extra workers end (a take past the size).
func TestWriterPoolLoanStress(t *testing.T) {
	t.Parallel()
	r := newPoolRig(t, 2, 100)
	r.behave = func(w *writer) {
		if rand.IntN(4) == 0 {
			r.leave(w)
		}
	}
	var loans sync.WaitGroup
	queued := r.kickFromMany(8, 2000, func(rnd *rand.Rand) {
		if rnd.IntN(16) == 0 {
			r.lend()
			loans.Add(1)
			go func() {
				defer loans.Done()
				runtime.Gosched()
				r.p.giveBack()
			}()
		}
	})
	loans.Wait()
	r.settle(queued)
	if m, l := r.maxIn.Load(), r.maxLent.Load(); m > 2+l {
		t.Fatalf("%d runs on the pool at once, for a pool of 2 with at most %d lent", m, l)
	}
}
