package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"albedo/api/wire"
)

// holdFrames keeps the page's animation frames from running until
// releaseFrames: what the page draws "on the next frame" waits, so that a
// test can make things happen within one frame. Waits meanwhile poll on
// a timer (waitHeld), since the usual wait polls on animation frames.
func (p *page) holdFrames() {
	p.t.Helper()
	eval[bool](p, `(() => { window.heldFrames = []; window.realRAF ??= window.requestAnimationFrame.bind(window);
		window.requestAnimationFrame = (cb) => heldFrames.push(cb); return true })()`)
}

// releaseFrames runs the held frames' callbacks in one real frame, and
// returns once the frame after it has come.
func (p *page) releaseFrames() {
	p.t.Helper()
	eval[bool](p, `(() => { window.requestAnimationFrame = realRAF; const cbs = heldFrames.splice(0);
		realRAF((t) => { for (const cb of cbs) cb(t) }); return true })()`)
	p.wait("the frame after the held ones", `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`)
}

// waitHeld is wait while frames are held.
func (p *page) waitHeld(what, js string) {
	p.t.Helper()
	p.waitWithin(what, js, 30*time.Second, chromedp.WithPollingInterval(10*time.Millisecond))
}

// shownTimes counts the transcript's messages whose text is text.
func shownTimes(text string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('#transcript article[data-offset] .body')].filter(b => b.textContent === %q).length`, text)
}

// The events of the session shown are drawn on the next frame, together;
// switching sessions before that frame must neither drop an event of the
// session switched to, nor draw one twice, nor draw one in another
// session's transcript.
func TestWebSwitchWithinAFrame(t *testing.T) {
	fx := newFixture(t, fixtureOpts{})
	cli(t, fx.home, "bots", "add", "idle")
	// Inputs to a bot that never connects are one event each: the message.
	for id, title := range map[string]string{"a": "alpha", "b": "beta"} {
		if _, err := fx.c.CreateSession(fx.ctx, id, wire.SessionCreate{Title: title, Provider: "bot:idle"}); err != nil {
			t.Fatal(err)
		}
	}
	put := func(id, text string) {
		t.Helper()
		if _, err := fx.c.PutInput(fx.ctx, id, uuid.Must(uuid.NewV7()).String(), text); err != nil {
			t.Fatal(err)
		}
	}
	received := func(id, text string) string {
		return fmt.Sprintf(`albedo.views.get(%q).events.some(e => e.text === %q)`, id, text)
	}
	b := startBrowser(t)
	pg := b.open(ownerLink(t, fx.home, "a"))
	pg.waitOpen("alpha")
	pg.wait("both listed", `document.querySelectorAll('#sessions li').length === 2`)
	clickIn := func(id, title string) {
		t.Helper()
		eval[bool](pg, fmt.Sprintf(`(() => { document.querySelector('#sessions li[data-session=%s] button').click(); return true })()`, id))
		pg.waitHeld(title+" open", fmt.Sprintf(`document.querySelector('#title').textContent === %q`, title))
	}

	// An event of alpha waits for the frame; beta is opened, and one of
	// beta's arrives before that frame.
	pg.holdFrames()
	put("a", "to alpha")
	pg.waitHeld("alpha's event received", received("a", "to alpha"))
	clickIn("b", "beta")
	put("b", "to beta")
	pg.waitHeld("beta's event received", received("b", "to beta"))
	pg.releaseFrames()
	if n := eval[int](pg, shownTimes("to beta")); n != 1 {
		t.Fatalf("beta's transcript shows its new message %d times", n)
	}
	if n := eval[int](pg, shownTimes("to alpha")); n != 0 {
		t.Fatalf("beta's transcript shows alpha's message %d times", n)
	}

	// An event of beta waits for the frame; alpha is opened and beta again
	// (drawn whole, with that event) before it.
	pg.holdFrames()
	put("b", "beta again")
	pg.waitHeld("beta's event received", received("b", "beta again"))
	clickIn("a", "alpha")
	clickIn("b", "beta")
	pg.releaseFrames()
	if n := eval[int](pg, shownTimes("beta again")); n != 1 {
		t.Fatalf("beta's transcript shows its new message %d times", n)
	}
	clickIn("a", "alpha")
	pg.wait("alpha's message", shownTimes("to alpha")+` === 1`)
}
