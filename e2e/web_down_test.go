//go:build !e2e_only || e2e_web

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"albedo/wire"
)

// hold puts the page's next connection attempt a minute away, so that
// only the page's own probe or a person's "retry now" can bring it back
// sooner.
const hold = `(() => { albedo.client.retry(new Error('held by the test'), 60000); return true })()`

// After albedo stop the page says the daemon was stopped and offers
// "retry now", which tries at once. A daemon that comes back is found by
// the page's probe, not at the end of its backoff: with the next attempt
// held a minute away, the page is back within seconds.
func TestWebStoppedDaemonIsSaidAndFoundAtOnce(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "down"}})
	p := startBrowser(t).open(ownerLink(t, fx.home, "s"))
	p.waitOpen("down")
	if !eval[bool](p, `document.querySelector('#retry').hidden`) {
		t.Fatal("retry now is offered while connected")
	}
	fx.d.stop()
	p.wait("the stop said, retry offered", `document.querySelector('#conn').textContent === 'daemon stopped: waiting for it to start' && !document.querySelector('#retry').hidden`)

	eval[bool](p, hold)
	attempt := eval[int](p, `albedo.client.attempt`)
	p.do(chromedp.Click(chromedp.CSS("#retry")))
	p.waitWithin("a new attempt at once", fmt.Sprintf(`albedo.client.attempt > %d`, attempt)+` && document.querySelector('#conn').textContent.startsWith('daemon stopped')`, 5*time.Second)

	eval[bool](p, hold)
	startDaemon(t, fx.home)
	up := time.Now()
	p.waitWithin("back long before the held attempt", `document.querySelector('#conn').textContent === 'connected' && document.querySelector('#retry').hidden`, 10*time.Second)
	t.Logf("the page was back %v after the daemon", time.Since(up).Round(time.Millisecond))
}

// A run of the page's probes that starts only once the daemon is back
// (the run before it ended with a connection attempt, which failed) still
// cuts the held wait short: that the daemon was down is remembered
// across runs, not only within one.
func TestWebProbeRunStartedAfterTheDaemonIsBackFindsIt(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "down"}})
	p := startBrowser(t).open(ownerLink(t, fx.home, "s"))
	p.waitOpen("down")
	fx.d.stop()
	p.wait("a probe saw the daemon down", `albedo.client.probeDown === true`)
	eval[bool](p, hold)
	// End the run as a connection attempt would (a socket on its way),
	// then let the socket go.
	eval[bool](p, `(() => { albedo.client.ws = {}; return true })()`)
	p.wait("the run ended", `!albedo.client.probing`)
	eval[bool](p, `(() => { albedo.client.ws = null; return true })()`)
	startDaemon(t, fx.home)
	eval[bool](p, `(() => { albedo.client.probe(); return true })()`)
	p.waitWithin("back long before the held attempt", `document.querySelector('#conn').textContent === 'connected'`, 10*time.Second)
}
