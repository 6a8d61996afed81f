package e2e

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// defaultParallel is how many of this package's tests run at once when
// go test is not given -parallel. Its default, GOMAXPROCS, is 2 on the
// machines this runs on, and most of these tests wait on other processes
// (daemons, Chromium, tmux, PostgreSQL) far more than they compute. Past
// a few, though, the package is bound by its CPU on two cores, and runs
// no faster with more at once (docs/perf-log.md has the runs); and the
// more run at once, the nearer the tests with a bound on how soon
// something happens come to missing it.
const defaultParallel = 6

// maxHeavy is how many heavy tests (parallelHeavy) run at once: each
// runs three daemons or thousands of inputs, and under a 2 s lease a node
// starved of CPU loses its turns to another.
const maxHeavy = 2

// slots is the package's own limit on its parallel tests: testing's is
// lifted (setParallel), since it lets the paused tests in in no useful
// order, and this one lets the long ones in first, so that the longest
// does not start last and keep the package running alone at its end,
// and keeps the heavy ones apart.
var slots *gate

// setParallel reads -parallel (defaultParallel when it is not given) as
// the width of slots, and raises testing's own limit past the number of
// tests, so that slots alone decides. Called by TestMain before m.Run.
func setParallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	width := defaultParallel
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.parallel" {
			if n, err := strconv.Atoi(f.Value.String()); err == nil && n > 0 {
				width = n
			}
		}
	})
	slots = &gate{width: width, heavy: min(maxHeavy, width)}
	slots.cond = sync.NewCond(&slots.mu)
	if err := flag.Set("test.parallel", "10000"); err != nil {
		fmt.Fprintln(os.Stderr, "set -test.parallel:", err)
		os.Exit(1)
	}
}

// A parallel test's kind: how slots treats it.
type kind struct {
	level int  // the order it is let in: a waiting test of a lower level that can go in goes first
	heavy bool // it needs one of the heavy places too
}

var (
	shortTest = kind{level: 2}
	heavyTest = kind{level: 1, heavy: true}
	longTest  = kind{level: 0}
	longHeavy = kind{level: 0, heavy: true}
)

// parallel runs t beside the package's other parallel tests, once slots
// lets it in. A test may call it only if it changes nothing the others
// share (the process's environment, working directory or limits, a fixed
// port, a global variable) and holds no bound on time that a loaded
// machine would break.
func parallel(t *testing.T) { slots.enter(t, shortTest) }

// parallelHeavy is parallel for a test that keeps a core or so busy.
func parallelHeavy(t *testing.T) { slots.enter(t, heavyTest) }

// parallelLong is parallel for one of the package's longest tests: it is
// let in before the others.
func parallelLong(t *testing.T) { slots.enter(t, longTest) }

// parallelLongHeavy is parallelLong for a test that is heavy too.
func parallelLongHeavy(t *testing.T) { slots.enter(t, longHeavy) }

// gate lets at most width tests run at once, at most heavy of them
// heavy; of the tests waiting that fit, those of the lowest level go in
// first.
type gate struct {
	mu           sync.Mutex
	cond         *sync.Cond
	width, heavy int
	running      int
	heavyRunning int
	waiting      map[kind]int // tests registered and not yet let in
}

// fits says whether a test of kind k could go in now.
func (g *gate) fits(k kind) bool {
	return g.running < g.width && (!k.heavy || g.heavyRunning < g.heavy)
}

// mayEnter says whether a test of kind k goes in now: it fits, and no
// test of a lower level that waits would fit.
func (g *gate) mayEnter(k kind) bool {
	if !g.fits(k) {
		return false
	}
	for w, n := range g.waiting {
		if n > 0 && w.level < k.level && g.fits(w) {
			return false
		}
	}
	return true
}

// enter registers t before t.Parallel pauses it: testing releases the
// paused top-level tests together once the serial ones are done, and by
// then every one of them has registered, so that a short test can see
// that a long one still waits. The slot is given back after every other
// cleanup of the test has run (this one is registered first).
func (g *gate) enter(t *testing.T, k kind) {
	t.Helper()
	g.mu.Lock()
	if g.waiting == nil {
		g.waiting = map[kind]int{}
	}
	g.waiting[k]++
	g.mu.Unlock()
	t.Parallel()
	paused := time.Now()
	g.mu.Lock()
	for !g.mayEnter(k) {
		g.cond.Wait()
	}
	g.waiting[k]--
	g.running++
	if k.heavy {
		g.heavyRunning++
	}
	g.mu.Unlock()
	began := time.Now()
	t.Cleanup(func() {
		// Its time, with its wait apart: -v's figure holds both.
		t.Logf("parallel: waited %v for a slot, ran %v", began.Sub(paused).Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
		g.mu.Lock()
		g.running--
		if k.heavy {
			g.heavyRunning--
		}
		g.cond.Broadcast()
		g.mu.Unlock()
	})
}
