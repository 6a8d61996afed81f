//go:build !e2e_only || e2e_web

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"albedo/wire"
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
	parallel(t)
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

// holdRequests pauses the page's requests whose URL matches pattern
// (the Fetch domain's wildcards) and returns their ids as they come; the
// test lets each go on with continueRequest.
func (p *page) holdRequests(pattern string) <-chan fetch.RequestID {
	p.t.Helper()
	held := make(chan fetch.RequestID, 16)
	if err := chromedp.Listen(p.ctx, func(ev any) {
		if e, ok := ev.(*fetch.EventRequestPaused); ok {
			held <- e.RequestID
		}
	}); err != nil {
		p.t.Fatal(err)
	}
	p.do(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: pattern}}})
		return err
	}))
	return held
}

// continueRequest lets a held request go on, and holds no more.
func (p *page) continueRequest(id fetch.RequestID) {
	p.t.Helper()
	p.do(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, fetch.Disable, cdp.Empty{})
		return err
	}))
}

// viewIsWhole is a condition on session id's view: its events are
// contiguous, from first, and the transcript shows exactly its messages.
func viewIsWhole(id string) string {
	return fmt.Sprintf(`(() => { const v = albedo.views.get(%q); const offs = v.events.map(e => e.offset);
		const dom = [...document.querySelectorAll('#transcript article[data-offset]')].map(a => Number(a.dataset.offset));
		const msgs = v.events.filter(e => e.type === 'message').map(e => e.offset);
		return offs.every((o, i) => i === 0 || o === offs[i-1] + 1) && dom.join() === msgs.join() })()`, id)
}

// A page of history asked for before a reset, and answered after it, is
// older than the view the reset made: spliced in front of it, it would
// leave a gap. The test holds the history request, makes the log grow and
// the page's subscription reset (it resubscribes with an epoch the
// daemon does not know, as after a session was made again), then lets
// the request go on: the page must drop that page and show its view whole.
func TestWebHistoryPageAfterAResetIsDropped(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{})
	cli(t, fx.home, "bots", "add", "idle")
	if _, err := fx.c.CreateSession(fx.ctx, "s", wire.SessionCreate{Title: "paged", Provider: "bot:idle"}); err != nil {
		t.Fatal(err)
	}
	head := func() int64 {
		t.Helper()
		s, err := fx.c.Session(fx.ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		return s.Head
	}
	putMany(t, fx, "s", 300, 8)
	b := startBrowser(t)
	p := b.open(ownerLink(t, fx.home, "s"))
	p.waitOpen("paged")
	p.wait("the latest event", fmt.Sprintf(`albedo.views.get('s').events.at(-1)?.offset === %d`, head()))

	// The page scrolls its transcript to the end once it has laid it out;
	// scrolling to the top before that changes nothing, and fires no
	// scroll event to page history in (seen under load in the full run).
	p.wait("the transcript at its end", `(() => { const tr = document.querySelector('#transcript');
		return tr.scrollTop > 0 && tr.scrollHeight - tr.scrollTop - tr.clientHeight < 40 })()`)
	held := p.holdRequests("*/events?before=*")
	eval[bool](p, `(() => { const tr = document.querySelector('#transcript'); tr.scrollTop = 0;
		tr.dispatchEvent(new Event('scroll')); return true })()`)
	var req fetch.RequestID
	select {
	case req = <-held:
	case <-time.After(30 * time.Second):
		t.Fatalf("scrolling to the top asked for no history; the page: %s", eval[string](p, `JSON.stringify({
			more: albedo.views.get('s').more, loading: albedo.loadingOlder, first: albedo.views.get('s').events[0]?.offset,
			top: document.querySelector('#transcript').scrollTop })`))
	}
	putMany(t, fx, "s", 150, 8)
	last := head()
	p.wait("the new events", fmt.Sprintf(`albedo.views.get('s').events.at(-1)?.offset === %d`, last))
	eval[bool](p, `(() => { albedo.client.subs.get('s').epoch = 'not-this-log'; albedo.client.resubscribe('s'); return true })()`)
	p.wait("the reset's view", fmt.Sprintf(`albedo.views.get('s').events[0]?.offset === %d && albedo.views.get('s').events.at(-1)?.offset === %d`, last-99, last))

	p.continueRequest(req)
	p.wait("the history request answered", `!albedo.loadingOlder`)
	p.wait("the view whole", viewIsWhole("s"))
	if first := eval[int64](p, `albedo.views.get('s').events[0].offset`); first != last-99 {
		t.Fatalf("the view begins at %d, not %d: the stale page was kept", first, last-99)
	}
	// Scrolling up now pages in what is older than the new view.
	p.wait("an older page", fmt.Sprintf(`(() => { document.querySelector('#transcript').scrollTop = 0;
		return albedo.views.get('s').events[0].offset < %d })()`, last-99))
	p.wait("the view whole", viewIsWhole("s"))
}
