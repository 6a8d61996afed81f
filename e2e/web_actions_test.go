//go:build !e2e_only || e2e_web

package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"

	"albedo/wire"
)

// The owner's actions from the page, as a person uses them: rename
// (the page asks with prompt, stubbed here), model and effort, delete
// (after confirm, stubbed). A rename, from the page or from another
// client, renames the header and the tab at once, not only the list.
func TestWebRenameSettingsAndDelete(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "first"}})
	if _, err := fx.c.CreateSession(fx.ctx, "o", wire.SessionCreate{Title: "other"}); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t)
	p := b.open(ownerLink(t, fx.home, "s"))
	p.waitOpen("first")

	// The button is clicked where it is, not at coordinates: the meta line
	// beside it may still be filling in (provider, who answers) on a
	// loaded machine, and a click computed before that lands elsewhere.
	eval[bool](p, `(() => { window.prompt = () => 'second'; document.querySelector('#rename').click(); return true })()`)
	p.wait("renamed from the page", `document.querySelector('#title').textContent === 'second' && document.title === 'second · albedo' &&
		document.querySelector('#sessions li.current .name').textContent === 'second'`)
	s, err := fx.c.Session(fx.ctx, "s")
	if err != nil || s.Title != "second" {
		t.Fatalf("the daemon has title %q (%v)", s.Title, err)
	}

	third := "third"
	if _, err := fx.c.PatchSession(fx.ctx, "s", s.ETag, wire.SessionPatch{Title: &third}); err != nil {
		t.Fatal(err)
	}
	p.wait("renamed elsewhere", `document.querySelector('#title').textContent === 'third' && document.title === 'third · albedo'`)

	p.do(chromedp.Click(chromedp.CSS("#edit")))
	p.wait("the editor", `!document.querySelector('#editor').hidden && !document.querySelector('#system').disabled`)
	eval[bool](p, `(() => { document.querySelector('#model').value = 'model-x'; document.querySelector('#effort').value = 'high'; document.querySelector('#system').value = 'Answer briefly.'; return true })()`)
	p.do(chromedp.Click(chromedp.CSS("#save")))
	p.wait("the new model and effort", `document.querySelector('#editor').hidden &&
		document.querySelector('#settings').textContent.includes('model model-x') && document.querySelector('#settings').textContent.includes('effort high')`)
	if s, err := fx.c.Session(fx.ctx, "s"); err != nil || s.Model != "model-x" || s.Effort != "high" || s.System != "Answer briefly." {
		t.Fatalf("the daemon has model %q effort %q system %q (%v)", s.Model, s.Effort, s.System, err)
	}
	// Opened again, the editor shows the session's system text.
	p.do(chromedp.Click(chromedp.CSS("#edit")))
	p.wait("the system text, read back", `document.querySelector('#system').value === 'Answer briefly.'`)
	p.do(chromedp.Click(chromedp.CSS("#edit")))

	eval[bool](p, `(() => { window.confirm = (q) => { window.asked = q; return true }; return true })()`)
	p.do(chromedp.Click(chromedp.CSS("#delete")))
	p.wait("deleted, and the next one open", `!document.querySelector('#sessions li[data-session=s]') &&
		document.querySelector('#title').textContent === 'other' && document.querySelector('#notice').textContent === 'deleted “third”'`)
	if q := eval[string](p, `window.asked`); q != "Delete “third” and all its messages?" {
		t.Fatalf("the page asked %q", q)
	}
	if ss, err := fx.c.Sessions(fx.ctx); err != nil || len(ss) != 1 || ss[0].ID != "o" {
		t.Fatalf("sessions after the delete: %v (%v)", ss, err)
	}
}
