//go:build !e2e_only || e2e_web

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"albedo/wire"
)

// A session deleted elsewhere leaves the page at once, by its reset
// (reason deleted), not by reading the list again (on a sessions push, or
// every 30 s): the test takes the list away (the page's list request
// never answers) and allows 3 s. The
// open session leaves the list and the header, and the page says so;
// with the last one gone the page says there is none.
func TestWebDeletedElsewhereLeavesAtOnce(t *testing.T) {
	// Not parallel: it wants the page changed within 3 s, a bound the
	// package's other tests beside it could push it past.
	fx, p := alphaBetaPage(t)
	eval[bool](p, `(() => { albedo.api.sessions = () => new Promise(() => {}); return true })()`)

	if err := fx.c.DeleteSession(fx.ctx, "a"); err != nil {
		t.Fatal(err)
	}
	p.waitWithin("alpha gone from the list and the header", `!document.querySelector('#sessions li[data-session=a]') &&
		document.querySelector('#title').textContent === 'beta' && document.title === 'beta · albedo' &&
		document.querySelector('#notice').textContent === '“alpha” was deleted elsewhere'`, 3*time.Second)

	if err := fx.c.DeleteSession(fx.ctx, "b"); err != nil {
		t.Fatal(err)
	}
	p.waitWithin("no session left", `document.querySelectorAll('#sessions li').length === 0 &&
		document.querySelector('#title').textContent === 'albedo' && document.title === 'albedo' &&
		document.querySelector('#transcript').textContent === 'No session yet.' &&
		document.querySelector('#notice').textContent === '“beta” was deleted elsewhere'`, 3*time.Second)
}

// + new asks for the provider: offered are echo and config.toml's
// profiles (fake, which no session uses yet) from GET /v1/providers, and a
// bot:NAME for each bot; what is typed is taken as the terminal's /new
// takes it, empty is the daemon's default, and a name the daemon cannot
// run is refused with the profiles it has.
func TestWebNewSessionWithAProvider(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "a", create: wire.SessionCreate{Title: "alpha"}})
	cli(t, fx.home, "bots", "add", "helper")
	p := startBrowser(t).open(ownerLink(t, fx.home, "a"))
	p.waitOpen("alpha")
	newSession := func(provider string, submit chromedp.Action[chromedp.Void]) {
		t.Helper()
		p.do(chromedp.Click(chromedp.CSS("#new")))
		p.wait("the choices", `!document.querySelector('#newform').hidden && document.activeElement.id === 'provider' &&
			[...document.querySelectorAll('#providers option')].map(o => o.value).join() === 'echo,fake,bot:helper' &&
			[...document.querySelectorAll('#providers option')].map(o => o.label).join('|') === 'echo · default|fake · fake-model|bot:helper'`)
		eval[bool](p, fmt.Sprintf(`(() => { document.querySelector('#provider').value = %q; return true })()`, provider))
		p.do(submit)
	}
	created := func(n int) wire.Session {
		t.Helper()
		ss, err := fx.c.Sessions(fx.ctx)
		if err != nil || len(ss) != n {
			t.Fatalf("the daemon has %d sessions (%v), want %d", len(ss), err, n)
		}
		return ss[0] // the newest first
	}

	newSession("bot:helper", chromedp.Click(chromedp.CSS("#create")))
	p.wait("a bot's session, open", `document.querySelector('#title').textContent !== 'alpha' && document.querySelector('#newform').hidden &&
		document.querySelector('#settings').textContent.startsWith('provider bot:helper')`)
	if s := created(2); s.Provider != "bot:helper" {
		t.Fatalf("the new session's provider is %q", s.Provider)
	}

	newSession("nosuch", pressEnter("#provider"))
	p.wait("the refusal", `document.querySelector('#notice').textContent.includes('unknown provider "nosuch"') &&
		document.querySelector('#notice').textContent.includes('fake') && !document.querySelector('#newform').hidden`)
	created(2)
	p.do(chromedp.KeyEvent(kb.Escape))
	p.wait("the form closed", `document.querySelector('#newform').hidden && document.activeElement.id === 'new'`)

	newSession("", pressEnter("#provider"))
	p.wait("a default session, open", `document.querySelector('#newform').hidden && document.querySelector('#settings').textContent.startsWith('provider echo') &&
		document.querySelectorAll('#sessions li').length === 3`)
	if s := created(3); s.Provider != "" {
		t.Fatalf("the default session's provider is %q", s.Provider)
	}
}

// The page reads the list of sessions a page at a time to its end: the
// daemon answers at most 100 sessions to a request that names no limit,
// and the page, asking for pages of 50 here, lists all 103, newest first.
func TestWebListsEveryPageOfSessions(t *testing.T) {
	parallel(t)
	fx, p := alphaBetaPage(t)
	eval[bool](p, `(() => { albedo.api.constructor.pageSize = 50; return true })()`)
	for i := range 101 {
		if _, err := fx.c.CreateSession(fx.ctx, fmt.Sprintf("n%03d", i), wire.SessionCreate{}); err != nil {
			t.Fatal(err)
		}
	}
	p.wait("103 listed, in pages of 50", `(() => {
		const ids = [...document.querySelectorAll('#sessions li')].map(li => li.dataset.session);
		return ids.length === 103 && ids[0] === 'n100' && ids.slice(-2).join() === 'b,a';
	})()`)
}
