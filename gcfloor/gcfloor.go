package gcfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// heapMinimum is the runtime's least heap goal at GOGC=100; it scales
// with GOGC (heapMinimum × GOGC/100), so a GOGC past floor/heapMinimum ×
// 100 would put the goal above the floor whatever is live.
const heapMinimum = 4 << 20

// The metrics GOGC applies to: the next heap goal is the live heap plus
// GOGC percent of the live heap, the stacks and the globals.
var samples = []string{"/gc/heap/live:bytes", "/gc/scan/stack:bytes", "/gc/scan/globals:bytes"}

// floor is one Keep's state, touched by the finalizer goroutine and stop.
type floor struct {
	bytes   uint64
	base    int // GOGC as it was
	most    int // the GOGC whose least goal is the floor
	mu      sync.Mutex
	percent int // GOGC as last set
	stopped bool
	read    []metrics.Sample
}

// adjusted, when set (by tests), is called after each adjustment; armed
// counts the sentinels made.
var (
	adjusted atomic.Pointer[func()]
	armed    atomic.Int64
)

// Keep holds the heap goal at bytes or more from the next collection on,
// until stop, which sets GOGC back as it was. With bytes 0 or less, with
// the collector off (GOGC=off) or collecting without pause (GOGC=0), it
// does nothing.
func Keep(bytes int64) (stop func()) {
	base := gogc()
	if bytes <= 0 || base <= 0 {
		return func() {}
	}
	f := &floor{bytes: uint64(bytes), base: base, most: max(base, int(bytes*100/heapMinimum)), percent: base, read: make([]metrics.Sample, len(samples))}
	for i, name := range samples {
		f.read[i].Name = name
	}
	f.arm()
	return f.stop
}

// sentinel is garbage as soon as it is made: its finalizer runs after the
// collection that finds it so, and makes the next one. It holds a pointer
// so that it is never batched with other small objects.
type sentinel struct{ _ *floor }

func (f *floor) arm() {
	armed.Add(1)
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		if f.adjust() {
			f.arm()
		}
	})
}

// adjust sets GOGC for the collection to come; false once stopped.
func (f *floor) adjust() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return false
	}
	metrics.Read(f.read)
	live := f.read[0].Value.Uint64()
	scanned := live + f.read[1].Value.Uint64() + f.read[2].Value.Uint64()
	want := f.base
	if live < f.bytes && scanned > 0 {
		need := math.Ceil(100 * float64(f.bytes-live) / float64(scanned))
		want = max(f.base, int(min(need, float64(f.most))))
	}
	// Only a change worth a sixteenth: setting GOGC takes the heap's lock.
	if d := want - f.percent; d > f.percent/16 || -d > f.percent/16 {
		debug.SetGCPercent(want)
		f.percent = want
	}
	if fn := adjusted.Load(); fn != nil {
		(*fn)()
	}
	return true
}

func (f *floor) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.stopped {
		f.stopped = true
		debug.SetGCPercent(f.base)
	}
}

// gogc is GOGC as it is now, -1 for off.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 100
	}
	return int(s[0].Value.Uint64())
}
