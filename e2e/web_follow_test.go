//go:build !e2e_only || e2e_web

package e2e

import (
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"albedo/wire"
)

// atEnd is true in the page when its transcript shows its end.
const atEnd = `(() => { const t = document.querySelector('#transcript'); return t.scrollHeight - t.scrollTop - t.clientHeight < 2 })()`

// The transcript follows its end through a resize (a phone's keyboard
// opening, devtools): shrunk while at the end, it still shows the end,
// and your message and its reply land in view. Sending shows the end
// even from far above it.
func TestWebFollowsTheEndThroughResizes(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "long"}})
	putMany(t, fx, "s", 20, 1)
	waitTurnsClosed(t, fx.ctx, fx.c, "s", 20)
	p := startBrowser(t).open(ownerLink(t, fx.home, "s"))
	p.waitOpen("long")
	p.wait("every reply, the end in view", `document.querySelectorAll('article[data-role=assistant]').length === 20 && `+atEnd)
	tall := eval[int](p, `document.querySelector('#transcript').clientHeight`)

	p.do(chromedp.EmulateViewport(1200, 700))
	p.wait("the transcript, shorter", `document.querySelector('#transcript').clientHeight < `+strconv.Itoa(tall-100))
	p.wait("the end, still in view", atEnd)

	send := func(text string, replies int) {
		t.Helper()
		eval[bool](p, `(() => { const i = document.querySelector('#input'); i.value = `+jsString(text)+`; document.querySelector('#send').click(); return true })()`)
		p.wait("the message", `[...document.querySelectorAll('article[data-role=user]')].some(a => a.innerText.includes(`+jsString(text)+`))`)
		if !eval[bool](p, atEnd) {
			t.Fatalf("%q was sent and the end is not in view: %s", text, eval[string](p, `(() => { const t = document.querySelector('#transcript'); return t.scrollTop + ' + ' + t.clientHeight + ' of ' + t.scrollHeight })()`))
		}
		p.wait("its reply", `document.querySelectorAll('article[data-role=assistant]').length === `+strconv.Itoa(replies))
		if !eval[bool](p, atEnd) {
			t.Fatalf("the reply to %q came below the view", text)
		}
	}
	send("after the resize", 21)

	// Far above the end, a message sent shows the end, and the reply
	// follows.
	eval[bool](p, `(document.querySelector('#transcript').scrollTop = 100, true)`)
	p.wait("the view, up", `!`+atEnd)
	send("from far above", 22)
	if ex := p.exceptions(); len(ex) > 0 {
		t.Fatalf("the page threw: %v", ex)
	}
}
