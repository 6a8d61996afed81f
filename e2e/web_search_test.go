//go:build !e2e_only || e2e_web

package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/uuid"
)

// The page's search box finds a message in another session, older than
// the hundred events the page loads at first: the hits take the list's
// place, the match marked; choosing one opens its session with that
// message in view and marked; Esc brings the list back.
func TestWebSearchOpensAnOldHit(t *testing.T) {
	parallel(t)
	fx, p := alphaBetaPage(t)
	if _, err := fx.c.PutInput(fx.ctx, "b", uuid.Must(uuid.NewV7()).String(), "the zeppelin lands at <dawn>"); err != nil {
		t.Fatal(err)
	}
	putMany(t, fx, "b", 60, 4) // 240 events after it
	waitTurnsClosed(t, fx.ctx, fx.c, "b", 61)
	p.do(chromedp.SendKeys(chromedp.CSS("#search"), "zeppelin"+kb.Enter))
	p.wait("the hits", `document.querySelectorAll('#hits li[data-offset]').length === 2 && document.querySelector('#sessions').hidden &&
		document.querySelector('#hits li[data-offset="1"] mark')?.textContent === 'zeppelin' &&
		document.querySelector('#hits li[data-offset="1"] .text').textContent === 'the zeppelin lands at <dawn>'`)
	p.do(chromedp.Click(chromedp.CSS(`#hits li[data-offset="1"] button`)))
	p.wait("beta open at the old message", `document.querySelector('#title').textContent === 'beta' && (() => {
		const a = document.querySelector('#transcript article[data-offset="1"]');
		if (!a || !a.classList.contains('hit')) return false;
		const r = a.getBoundingClientRect(), tr = document.querySelector('#transcript').getBoundingClientRect();
		return r.bottom > tr.top && r.top < tr.bottom;
	})()`)
	p.do(chromedp.SendKeys(chromedp.CSS("#search"), kb.Escape))
	p.wait("the list back", `!document.querySelector('#sessions').hidden && document.querySelector('#hits').hidden`)
	if got := len(p.exceptions()); got != 0 {
		t.Fatalf("the page threw: %v", p.exceptions())
	}
}
