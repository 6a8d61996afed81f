//go:build !e2e_only || e2e_web

package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/uuid"

	"albedo/wire"
)

// tabOrder presses Tab n times from the top of the page and returns, for
// each press, the focused element: its id, else its tag and text, and
// whether it is inside the session list.
func (p *page) tabOrder(n int) []focused {
	p.t.Helper()
	eval[bool](p, `(() => { document.activeElement?.blur(); window.getSelection().removeAllRanges(); return true })()`)
	var out []focused
	for range n {
		p.do(chromedp.KeyEvent(kb.Tab))
		out = append(out, eval[focused](p, `(() => { const e = document.activeElement;
			return {name: e.id || e.tagName.toLowerCase() + ':' + e.textContent.trim().slice(0, 20), inList: !!e.closest('#sidebar')} })()`))
	}
	return out
}

type focused struct {
	Name   string `json:"name"`
	InList bool   `json:"inList"`
}

// At 360 px the session list is a drawer. Closed, Tab never reaches its
// buttons (they are off-screen); the toggle says it is closed. Open, Tab
// reaches them, Esc closes it, and choosing a session closes it too.
func TestWebDrawerKeyboardAt360(t *testing.T) {
	parallel(t)
	_, p := alphaBetaPage(t)
	p.do(chromedp.EmulateViewport(360, 740))
	p.wait("the list folded", `getComputedStyle(document.querySelector('#toggle')).display !== 'none' &&
		document.querySelector('#sidebar').getBoundingClientRect().right <= 0`)

	order := p.tabOrder(15)
	reached := map[string]bool{}
	for _, f := range order {
		if f.InList {
			t.Fatalf("Tab reached %q in the closed list; the order was %v", f.Name, order)
		}
		reached[f.Name] = true
	}
	if !reached["toggle"] || !reached["input"] {
		t.Fatalf("Tab did not reach the toggle and the composer: %v", order)
	}
	if got := eval[string](p, `document.querySelector('#toggle').getAttribute('aria-expanded')`); got != "false" {
		t.Fatalf("the closed list's toggle says aria-expanded=%s", got)
	}

	// Open it from the keyboard: the focus goes into it (to the session
	// shown), Shift-Tab walks up its buttons, Esc closes it and gives the
	// focus back to the toggle.
	eval[bool](p, `(() => { document.querySelector('#toggle').focus(); return true })()`)
	p.do(chromedp.KeyEvent(kb.Enter))
	p.wait("the list open, focused", `document.querySelector('#toggle').getAttribute('aria-expanded') === 'true' && !document.querySelector('#sidebar').inert &&
		document.querySelector('#sidebar').getBoundingClientRect().left >= 0 && document.activeElement === document.querySelector('#sessions li.current button')`)
	p.do(chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(kb.ModifierShift)))
	if got := eval[string](p, `document.activeElement.closest('li')?.dataset.session || document.activeElement.id`); got != "b" {
		t.Fatalf("Shift-Tab from alpha's button went to %q, not beta's", got)
	}
	p.do(chromedp.KeyEvent(kb.Escape))
	p.wait("the list closed by Esc", `document.querySelector('#toggle').getAttribute('aria-expanded') === 'false' &&
		document.activeElement.id === 'toggle' && document.querySelector('#sidebar').inert`)

	// Choosing a session closes it, and the composer has the focus.
	p.do(chromedp.KeyEvent(kb.Enter))
	p.wait("the list open", `document.querySelector('#toggle').getAttribute('aria-expanded') === 'true'`)
	eval[bool](p, `(() => { document.querySelector('#sessions li[data-session=b] button').focus(); return true })()`)
	p.do(chromedp.KeyEvent(kb.Enter))
	p.wait("beta open, the list closed", `document.querySelector('#title').textContent === 'beta' &&
		document.querySelector('#toggle').getAttribute('aria-expanded') === 'false' && document.activeElement.id === 'input' &&
		document.querySelector('#sidebar').getBoundingClientRect().right <= 0`)
	for _, f := range p.tabOrder(15) {
		if f.InList {
			t.Fatalf("Tab reached %q in the list closed again", f.Name)
		}
	}

	// Wide again, the list is shown and reachable.
	p.do(chromedp.EmulateViewport(1200, 900))
	p.wait("the list shown", `getComputedStyle(document.querySelector('#toggle')).display === 'none' && !document.querySelector('#sidebar').inert`)
	inList := false
	for _, f := range p.tabOrder(14) { // a round of the page's stops, from wherever the walk above left off
		inList = inList || f.InList
	}
	if !inList {
		t.Fatal("Tab does not reach the list on a wide screen")
	}
}

// A keyboard user's focus on the session list survives the list's
// redrawing (it redraws on every session's activity): it stays on the
// same session's button.
func TestWebListKeepsFocusAcrossRedraws(t *testing.T) {
	parallel(t)
	fx, p := alphaBetaPage(t)
	eval[bool](p, `(() => { document.querySelector('#sessions li[data-session=b] button').focus(); return true })()`)
	// Activity in beta and a session made elsewhere: two redraws.
	if _, err := fx.c.PutInput(fx.ctx, "b", uuid.Must(uuid.NewV7()).String(), "news"); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.c.CreateSession(fx.ctx, "c", wire.SessionCreate{Title: "gamma"}); err != nil {
		t.Fatal(err)
	}
	p.wait("gamma listed, beta's reply unread", `document.querySelectorAll('#sessions li').length === 3 &&
		document.querySelector('#sessions li[data-session=b] .count')?.textContent === '1'`)
	if got := eval[string](p, `document.activeElement.closest('#sessions li')?.dataset.session || document.activeElement.tagName`); got != "b" {
		t.Fatalf("after the list redrew the focus is on %q, not beta's button", got)
	}
}
