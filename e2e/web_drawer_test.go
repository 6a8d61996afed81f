//go:build !e2e_only || e2e_web

package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// At 360 px the open drawer covers the ☰ toggle: it closes from a ✕ of
// its own, and with a tap on the transcript it leaves in view.
func TestWebDrawerClosesByTapAt360(t *testing.T) {
	parallel(t)
	_, p := alphaBetaPage(t)
	p.do(chromedp.EmulateViewport(360, 740))
	const open = `document.querySelector('#toggle').getAttribute('aria-expanded') === 'true' && document.querySelector('#sidebar').getBoundingClientRect().left >= 0`
	const closed = `document.querySelector('#toggle').getAttribute('aria-expanded') === 'false' && document.querySelector('#sidebar').inert`
	p.wait("the list folded", `document.querySelector('#sidebar').getBoundingClientRect().right <= 0`)
	if eval[bool](p, `getComputedStyle(document.querySelector('#closelist')).display !== 'none' && document.querySelector('#closelist').getBoundingClientRect().width > 0 && !document.querySelector('#sidebar').inert`) {
		t.Fatal("the closed drawer's ✕ is reachable")
	}

	p.do(chromedp.Click(chromedp.CSS("#toggle")))
	p.wait("the list open", open)
	p.wait("its ✕ on screen", `(() => { const r = document.querySelector('#closelist').getBoundingClientRect(); return r.width > 0 && r.left >= 0 && r.right <= innerWidth })()`)
	p.do(chromedp.Click(chromedp.CSS("#closelist")))
	p.wait("closed by its ✕", closed+` && document.activeElement.id === 'toggle'`)

	p.do(chromedp.Click(chromedp.CSS("#toggle")))
	p.wait("the list open again", open)
	x := eval[float64](p, `(document.querySelector('#sidebar').getBoundingClientRect().right + innerWidth) / 2`)
	y := eval[float64](p, `(() => { const r = document.querySelector('#transcript').getBoundingClientRect(); return r.y + r.height / 2 })()`)
	p.do(chromedp.MouseClickXY(x, y))
	p.wait("closed by a tap on the transcript", closed+` && document.querySelector('#title').textContent === 'alpha'`)
}
