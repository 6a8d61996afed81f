package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func goal() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// collect runs a collection and waits for the adjustment after it.
func collect(t *testing.T) {
	t.Helper()
	done := make(chan struct{}, 1)
	fn := func() {
		select {
		case done <- struct{}{}:
		default:
		}
	}
	adjusted.Store(&fn)
	defer adjusted.Store(nil)
	runtime.GC()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("no adjustment within 10 s of a collection")
	}
}

var sink [][]byte

func TestTheGoalStaysAtTheFloor(t *testing.T) {
	const floor = 256 << 20
	if g := goal(); g >= floor {
		t.Fatalf("the goal is %d before Keep; the test needs it below %d", g, floor)
	}
	stop := Keep(floor)
	defer stop()
	collect(t)
	if g := goal(); g < floor*15/16 || g > floor*17/16 {
		t.Fatalf("the goal is %d after a collection, want the floor, %d", g, floor)
	}
	stop()
	if p := gogc(); p != 100 {
		t.Fatalf("GOGC is %d after stop, want 100 as it was", p)
	}
}

func TestALargeLiveHeapKeepsGOGC(t *testing.T) {
	stop := Keep(8 << 20)
	defer stop()
	collect(t)
	if p := gogc(); p <= 100 {
		t.Fatalf("GOGC is %d with little live, want it raised", p)
	}
	for range 64 {
		sink = append(sink, make([]byte, 1<<20))
	}
	defer func() { sink = nil }()
	collect(t)
	if p := gogc(); p != 100 {
		t.Fatalf("GOGC is %d with 64 MiB live over an 8 MiB floor, want 100 as it was", p)
	}
}

func TestNothingWithGCOffOrWithoutPause(t *testing.T) {
	defer debug.SetGCPercent(100)
	for _, p := range []int{-1, 0} {
		debug.SetGCPercent(p)
		before := armed.Load()
		stop := Keep(64 << 20)
		if n := armed.Load() - before; n != 0 {
			t.Errorf("GOGC %d: Keep armed %d sentinels, want none", p, n)
		}
		stop()
		if got := gogc(); got != p {
			t.Errorf("GOGC is %d after stop, want %d as it was", got, p)
		}
	}
}
