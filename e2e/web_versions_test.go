//go:build !e2e_only || e2e_web

package e2e

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"albedo/wire"
)

// versionsOf is, in the page, the ‹ i/n › of the first message of role
// in the transcript: "i/n" then "<" or "-" and ">" or "-" for whether
// each arrow may be used; "" when it has none.
func versionsOf(role string) string {
	return `(() => { const g = document.querySelector('#transcript > article[data-role=` + role + `] > header > .versions');
		if (!g) return '';
		return g.querySelector('.of').textContent + ' ' + (g.querySelector('[data-go=prev]').disabled ? '-' : '<') + (g.querySelector('[data-go=next]').disabled ? '-' : '>') })()`
}

// An edited message and a regenerated reply show ‹ i/n › beside them,
// whose arrows open their other versions in place, from the mouse and
// from the keyboard, and at 360 px. The forks are read once per origin
// when a session opens, never per message; a fork made elsewhere, or
// from the page, joins the versions without a reload.
func TestWebVersionsInline(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "plan"}})
	putInput(t, fx, "s", "first question")
	var q int64 // the question's offset
	for _, ev := range waitTurnsClosed(t, fx.ctx, fx.c, "s", 1) {
		if ev.Type == wire.EventMessage && ev.Role == wire.RoleUser {
			q = ev.Offset
		}
	}
	fork := func(req wire.ForkRequest, text string) string {
		t.Helper()
		f, err := fx.c.Fork(fx.ctx, "s", req)
		if err != nil {
			t.Fatal(err)
		}
		if text != "" {
			putInput(t, fx, f.ID, text)
		}
		waitTurnsClosed(t, fx.ctx, fx.c, f.ID, 1)
		return f.ID
	}
	edit := fork(wire.ForkRequest{At: q - 1}, "first question, edited")
	regen := fork(wire.ForkRequest{At: q, Rerun: true}, "")

	p := startBrowser(t).open(ownerLink(t, fx.home, "s"))
	p.waitOpen("plan")
	p.wait("the question's and the reply's versions", versionsOf("user")+` === '1/2 ->' && `+versionsOf("assistant")+` === '1/2 ->'`)

	// Messages come and go; the forks are not read again for them.
	eval[bool](p, `(() => { window.forksRead = 0; const f = window.fetch;
		window.fetch = (u, i) => { if (String(u).endsWith('/forks')) window.forksRead++; return f(u, i) }; return true })()`)
	for i := range 3 {
		putInput(t, fx, "s", fmt.Sprintf("question %d", i+2))
	}
	p.wait("the new replies", `document.querySelectorAll('#transcript > article[data-role=assistant]').length === 4`)
	if n := eval[int](p, `window.forksRead`); n != 0 {
		t.Fatalf("the page read the forks %d times as messages came", n)
	}

	// From the keyboard: › on the question opens the edit, at its message,
	// with the focus on the arrow that goes back; Enter there goes back.
	eval[bool](p, `(document.querySelector('#transcript > article[data-role=user] .versions [data-go=next]').focus(), true)`)
	p.do(chromedp.KeyEvent(kb.Enter))
	p.wait("the edit, open at its message", `window.albedo.current === `+jsString(edit)+` &&
		document.querySelector('#transcript > article[data-role=user]')?.classList.contains('hit')`)
	p.wait("its versions, the focus on ‹", versionsOf("user")+` === '2/2 <-' &&
		document.activeElement === document.querySelector('#transcript > article[data-role=user] .versions [data-go=prev]')`)
	p.wait("the edit's own text", `document.querySelector('#transcript > article[data-role=user] .body').textContent === 'first question, edited'`)
	if n := eval[int](p, `window.forksRead`); n != 2 {
		t.Fatalf("opening the edit read forks %d times, want 2 (its own and its parent's)", n)
	}
	p.do(chromedp.KeyEvent(kb.Enter))
	p.wait("the original again, the focus on ›", `window.albedo.current === 's' && `+versionsOf("user")+` === '1/2 ->' &&
		document.activeElement === document.querySelector('#transcript > article[data-role=user] .versions [data-go=next]')`)

	// The reply's versions: the regenerated one holds the same question,
	// which has no versions there (its edit is a fork of the original).
	eval[bool](p, `(document.querySelector('#transcript > article[data-role=assistant] .versions [data-go=next]').click(), true)`)
	p.wait("the regenerated reply", `window.albedo.current === `+jsString(regen)+` && `+versionsOf("assistant")+` === '2/2 <-' && `+versionsOf("user")+` === ''`)
	eval[bool](p, `(document.querySelector('#transcript > article[data-role=assistant] .versions [data-go=prev]').click(), true)`)
	p.wait("the original again", `window.albedo.current === 's' && `+versionsOf("assistant")+` === '1/2 ->'`)

	// A fork made elsewhere joins the versions in place.
	again := fork(wire.ForkRequest{At: q - 1}, "first question, again")
	p.wait("three versions of the question", versionsOf("user")+` === '1/3 ->'`)

	// An edit made on the page is the last version once it is sent.
	eval[bool](p, `(document.querySelector('#transcript > article[data-role=user] .msg-actions [data-act=edit]').click(), true)`)
	p.wait("the edit's fork, open", `![`+jsString("s")+`, `+jsString(edit)+`, `+jsString(again)+`].includes(window.albedo.current) &&
		document.querySelector('#input').value === 'first question'`)
	eval[bool](p, `(document.querySelector('#input').value = 'first question, once more', document.querySelector('#send').click(), true)`)
	p.wait("four versions, this one the last", versionsOf("user")+` === '4/4 <-'`)

	// At 360 px the arrows are on the screen, big enough to tap, and a tap
	// on ‹ opens the version before.
	p.do(chromedp.EmulateViewport(360, 740))
	p.wait("the arrows on a phone's screen, uncovered", `(() => { const el = document.querySelector('#transcript > article[data-role=user] .versions [data-go=prev]');
		const b = el.getBoundingClientRect();
		return b.left >= 0 && b.right <= innerWidth && b.height >= 32 && b.width >= 32 && document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2) === el })()`)
	xy := eval[[]float64](p, `(() => { const b = document.querySelector('#transcript > article[data-role=user] .versions [data-go=prev]').getBoundingClientRect(); return [b.x + b.width / 2, b.y + b.height / 2] })()`)
	p.do(chromedp.MouseClickXY(xy[0], xy[1]))
	p.wait("the version before, by a tap", `window.albedo.current === `+jsString(again)+` && `+versionsOf("user")+` === '3/4 <>'`)
	if ex := p.exceptions(); len(ex) > 0 {
		t.Fatalf("the page threw: %v", ex)
	}
}
