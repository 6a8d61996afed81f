//go:build !e2e_only || e2e_web

package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/uuid"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// stopCue is a condition: the interrupted turn's line shows, with its
// icon drawn (an SVG of some size, not a glyph a font may lack).
const stopCue = `(() => { const d = document.querySelector('.turn.interrupted'); const svg = d?.querySelector('svg.icon');
	return !!d && d.textContent.includes('interrupted (user)') && !!svg && svg.getBoundingClientRect().width > 0 })()`

// While a turn runs the page shows a Stop button, which a tap on a phone
// reaches (360 px): it interrupts the turn, and goes once the turn has
// ended; the meta line says how long the turn has run. Esc interrupts
// from anywhere on the page, not only from inside the text box.
func TestWebStopButtonAndEscFromAnywhere(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Title: "stop", Provider: "fake"}})
	p := startBrowser(t).open(ownerLink(t, fx.home, "s"))
	p.waitOpen("stop")
	p.do(chromedp.EmulateViewport(360, 740))
	if !eval[bool](p, `document.querySelector('#stop').hidden`) {
		t.Fatal("a Stop button with no turn running")
	}

	run := func(text string) chan struct{} {
		block := make(chan struct{})
		fx.fake.Push(fakeopenai.Reply{Chunks: []string{"going on"}, Block: block})
		if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), text); err != nil {
			t.Fatal(err)
		}
		p.wait("the Stop button, on screen", `(() => { const b = document.querySelector('#stop'); const r = b.getBoundingClientRect();
			return !b.hidden && r.width > 0 && r.right <= innerWidth && r.bottom <= innerHeight && b.querySelector('svg.icon') })()`)
		p.wait("how long it has run", `/running \d+ s \(Esc interrupts\)/.test(document.querySelector('#settings').textContent)`)
		return block
	}

	block := run("first")
	defer close(block)
	p.do(chromedp.Click(chromedp.CSS("#stop")))
	p.wait("the turn interrupted, the button gone", stopCue+` && document.querySelector('#stop').hidden`)

	// Esc with the focus on the page's body, not in the text box.
	block2 := run("second")
	defer close(block2)
	eval[bool](p, `(() => { document.activeElement?.blur(); return document.activeElement === document.body })()`)
	p.do(chromedp.KeyEvent(kb.Escape))
	p.wait("the second turn interrupted by Esc", `document.querySelectorAll('.turn.interrupted').length === 2 && document.querySelector('#stop').hidden`)
}
