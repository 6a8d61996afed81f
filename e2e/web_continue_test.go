//go:build !e2e_only || e2e_web

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// oneReply is a condition: the transcript shows one reply, whose text is
// the cut-off reply's joined to its rest, with no "continue" left on it.
const oneReply = `(() => { const shown = [...document.querySelectorAll('#transcript article[data-role=assistant]')].filter((a) => !a.hidden && a.offsetParent);
	return shown.length === 1 && shown[0].querySelector('.body').innerText.trim() === 'Once upon a time, the end.' && shown[0].dataset.state === 'complete'
		&& !document.querySelector('.continue-bar') })()`

// streamingInTheReply is a condition: the rest, all streamed but not yet
// committed, shows inside the cut-off reply's own element, with no reply
// of its own.
const streamingInTheReply = `(() => { const shown = [...document.querySelectorAll('#transcript article[data-role=assistant]')].filter((a) => !a.hidden && a.offsetParent);
	return shown.length === 1 && shown[0].querySelector('.body').innerText.trim() === 'Once upon a time, the end.' && !!shown[0].dataset.streaming
		&& !document.querySelector('#stream') })()`

// A reply an interrupt cut off offers "continue" to those who may write
// (not on a read link); a click runs it on, and its rest streams and then
// shows as the rest of that reply, on this page and on a page opened
// later.
func TestWebContinuesACutOffReply(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Title: "story", Provider: "fake"}})
	block, rest := make(chan struct{}), make(chan struct{})
	defer close(block)
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"Once upon "}, Block: block}, fakeopenai.Reply{Chunks: []string{"a time, ", "the end."}, Block: rest})
	b := startBrowser(t)
	p := b.open(ownerLink(t, fx.home, "s"))
	viewer := b.open(shareLink(t, fx.home, "s"))
	p.waitOpen("story")
	viewer.waitOpen("story")
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "tell a story"); err != nil {
		t.Fatal(err)
	}
	p.wait("the reply streaming", `(document.querySelector('#stream')?.innerText || '').includes('Once upon')`)
	if _, err := fx.c.Interrupt(fx.ctx, "s"); err != nil {
		t.Fatal(err)
	}
	cut := `document.querySelector('#transcript article[data-role=assistant][data-state=interrupted]')`
	p.wait("continue on the cut-off reply", `(() => { const b = `+cut+`?.querySelector('.continue-bar button'); return !!b && b.offsetParent !== null && !b.disabled })()`)
	viewer.wait("the cut-off reply on the read link", `!!`+cut+` && document.querySelector('#conn').textContent === 'connected'`)
	if eval[bool](viewer, `!!document.querySelector('.continue-bar')`) {
		t.Fatal("a read link is offered continue")
	}
	p.do(chromedp.Click(chromedp.CSS(".continue-bar button")))
	p.wait("the rest streaming in the reply", streamingInTheReply)
	viewer.wait("the rest streaming in the reply on the read link", streamingInTheReply)
	close(rest)
	p.wait("the reply and its rest as one reply", oneReply)
	viewer.wait("the reply and its rest as one reply on the read link", oneReply)

	later := b.open(ownerLink(t, fx.home, "s"))
	later.waitOpen("story")
	later.wait("the reply and its rest as one reply, read from the history", oneReply)
	if n := eval[int](later, `document.querySelectorAll('#transcript article[data-role=assistant]').length`); n != 2 {
		t.Fatalf("the history's two messages drawn as %d elements", n)
	}
}

// A continue the daemon refuses, here since another client continued the
// reply first, says why in words in the notice.
func TestWebContinueRefusedSaysWhy(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Title: "story", Provider: "fake"}})
	block := make(chan struct{})
	defer close(block)
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"Once upon "}, Block: block}, fakeopenai.Reply{Chunks: []string{"a time, the end."}})
	p := startBrowser(t).open(ownerLink(t, fx.home, "s"))
	p.waitOpen("story")
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "tell a story"); err != nil {
		t.Fatal(err)
	}
	p.wait("the reply streaming", `(document.querySelector('#stream')?.innerText || '').includes('Once upon')`)
	if _, err := fx.c.Interrupt(fx.ctx, "s"); err != nil {
		t.Fatal(err)
	}
	p.wait("continue on the cut-off reply", `!!document.querySelector('.continue-bar button')`)
	held := p.holdRequests("*/continue")
	p.do(chromedp.Click(chromedp.CSS(".continue-bar button")))
	var id fetch.RequestID
	select {
	case id = <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("the page never asked to continue")
	}
	if out := cli(t, fx.home, "continue", "story"); strings.TrimSpace(out) != "a time, the end." {
		t.Fatalf("albedo continue printed %q", out)
	}
	p.continueRequest(id)
	p.wait("the refusal in words", `document.querySelector('#notice').textContent === 'continue: nothing to continue: the newest reply is whole'`)
	p.wait("the reply and its rest as one reply", oneReply)
}
