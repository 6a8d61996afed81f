package e2e

import (
	"testing"
	"time"

	"albedo/api/wire"
)

// A session deleted elsewhere leaves the page at once, by its reset
// (reason deleted), not by the list's poll every 5 s: the test takes the
// poll away (the page's list request never answers) and allows 3 s. The
// open session leaves the list and the header, and the page says so;
// with the last one gone the page says there is none.
func TestWebDeletedElsewhereLeavesAtOnce(t *testing.T) {
	fx := newFixture(t, fixtureOpts{session: "a", create: wire.SessionCreate{Title: "alpha"}})
	if _, err := fx.c.CreateSession(fx.ctx, "b", wire.SessionCreate{Title: "beta"}); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t)
	p := b.open(ownerLink(t, fx.home, "a"))
	p.waitOpen("alpha")
	p.wait("both listed", `document.querySelectorAll('#sessions li').length === 2`)
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
