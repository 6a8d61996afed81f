//go:build !e2e_only || e2e_web

package e2e

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"albedo/wire"
)

// perfGoals makes TestWebLongSessionAndSteadyStream assert the page's
// speed goals. A speed is a benchmark's to measure, not the suite's to
// assert: in the suite, beside the other packages' tests on 2 CPUs, a
// page that does not get the CPU misses a goal however fast it is. So the
// suite logs the figures and asserts what does not depend on the CPU; the
// benchmark (docs/benchmarks.md, "The browser client") passes this flag.
var perfGoals = flag.Bool("perfgoals", false, "assert the page's speed goals in TestWebLongSessionAndSteadyStream (otherwise log them)")

// perfAttempts is how many tries each of the page's speed goals gets
// under -perfgoals: the best counts, an attempt that meets the goal ends
// the loop, and every attempt's figure is logged. A page slow every time
// still fails. Without -perfgoals one attempt is logged.
func perfAttempts() int {
	if *perfGoals {
		return 3
	}
	return 1
}

// missedGoal fails the test under -perfgoals, and logs the miss otherwise.
func missedGoal(t *testing.T, format string, args ...any) {
	t.Helper()
	if *perfGoals {
		t.Errorf(format, args...)
		return
	}
	t.Logf("(a speed goal, asserted under -perfgoals) "+format, args...)
}

// The page's speed goals (docs/benchmarks.md has the figures). A session
// of 5 000 messages opens on its latest in at most 1 s, from navigation,
// and scrolling up pages older ones in; then 100 events a second for 10 s
// cause no main-thread task over 50 ms (the Long Tasks API reports exactly
// those), and the DOM stays bounded. The opening on the latest, the
// paging and the bounds are asserted always; the two speeds under
// -perfgoals.
func TestWebLongSessionAndSteadyStream(t *testing.T) {
	// Not parallel: its goals are how fast a page is with the CPU it
	// gets, and the package's other tests beside it would take that CPU.
	fx := newFixture(t, fixtureOpts{})
	cli(t, fx.home, "bots", "add", "idle")
	if _, err := fx.c.CreateSession(fx.ctx, "s", wire.SessionCreate{Title: "long", Provider: "bot:idle"}); err != nil {
		t.Fatal(err)
	}
	// Inputs to a bot that never connects wait as messages: 5 000 of them,
	// and no turn runs.
	putMany(t, fx, "s", 5000, 16)
	b := startBrowser(t)
	link := ownerLink(t, fx.home, "s")

	const openGoal = 1000.0 // ms
	var p *page
	best := 0.0
	for i := 1; ; i++ {
		p = b.open(link)
		// Polled on every animation frame: the first frame that shows it.
		p.wait("the latest message", `(() => { if (!document.querySelector('article[data-offset="5000"]')) return false;
			window.openedAt ??= performance.now(); return true })()`)
		opened := eval[float64](p, `openedAt`)
		t.Logf("attempt %d: the latest of 5 000 messages shown %.0f ms after navigation", i, opened)
		if i == 1 || opened < best {
			best = opened
		}
		if opened <= openGoal || i == perfAttempts() {
			break
		}
		p.close()
	}
	if best > openGoal {
		missedGoal(t, "a 5 000-message session opened on its latest in %.0f ms at best of %d attempts; the goal is %.0f ms", best, perfAttempts(), openGoal)
	}
	if n := eval[int](p, `document.querySelectorAll('article[data-offset]').length`); n > 200 {
		t.Fatalf("the page drew %d messages to open on the latest", n)
	}
	first := eval[int](p, `Number(document.querySelector('article[data-offset]').dataset.offset)`)
	p.wait("an older page", fmt.Sprintf(`(() => { document.querySelector('#transcript').scrollTop = 0;
		return Number(document.querySelector('article[data-offset]').dataset.offset) < %d })()`, first))
	older := eval[int](p, `Number(document.querySelector('article[data-offset]').dataset.offset)`)
	t.Logf("scrolling up paged in offsets from %d to %d", first, older)

	const rate, secs = 100, 10
	head := 5000
	fewest, fewestMax := -1, 0.0 // the best attempt's long tasks, and its longest
	for i := 1; ; i++ {
		eval[bool](p, `(() => { window.longTasks = []; window.longTaskObserver?.disconnect();
			window.longTaskObserver = new PerformanceObserver(l => { for (const e of l.getEntries()) longTasks.push(e.duration) });
			longTaskObserver.observe({type: 'longtask'}); return true })()`)
		p.wait("following the end", `(() => { const tr = document.querySelector('#transcript'); tr.scrollTop = tr.scrollHeight; return true })()`)
		busy := p.busy()
		tick := time.NewTicker(time.Second / rate)
		start := time.Now()
		for range rate * secs {
			<-tick.C
			if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "a steady message of a few words"); err != nil {
				t.Fatal(err)
			}
		}
		sent := time.Since(start)
		tick.Stop()
		head += rate * secs
		p.wait("the last streamed message", fmt.Sprintf(`!!document.querySelector('article[data-offset="%d"]')`, head))
		busy = p.busy() - busy
		longTasks := eval[[]float64](p, `longTasks`)
		maxTask := 0.0
		for _, d := range longTasks {
			maxTask = max(maxTask, d)
		}
		shown := eval[int](p, `document.querySelectorAll('article[data-offset]').length`)
		t.Logf("attempt %d: %d events/s for %v: %d main-thread tasks over 50 ms (longest %.0f ms); the main thread busy %v; %d messages in the DOM",
			i, rate, sent.Round(time.Millisecond), len(longTasks), maxTask, busy.Round(time.Millisecond), shown)
		if shown > 1100 {
			t.Fatalf("the DOM holds %d messages while following: it is not bounded", shown)
		}
		if fewest < 0 || len(longTasks) < fewest {
			fewest, fewestMax = len(longTasks), maxTask
		}
		if len(longTasks) == 0 || i == perfAttempts() {
			break
		}
	}
	if fewest > 0 {
		missedGoal(t, "%d events/s for %d s caused %d main-thread tasks over 50 ms (longest %.0f ms) at best of %d attempts; the goal is none",
			rate, secs, fewest, fewestMax, perfAttempts())
	}
}

// busy is how long the page's main thread has run tasks, all told
// (Performance.getMetrics' TaskDuration).
func (p *page) busy() time.Duration {
	p.t.Helper()
	var d time.Duration
	p.do(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, performance.Enable, performance.EnableParams{}); err != nil {
			return err
		}
		r, err := cdp.Call(ctx, t, performance.GetMetrics, cdp.Empty{})
		if err != nil {
			return err
		}
		for _, m := range r.Metrics {
			if m.Name == "TaskDuration" {
				d = time.Duration(m.Value * float64(time.Second))
			}
		}
		return nil
	}))
	return d
}
