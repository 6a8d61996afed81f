//go:build !e2e_only || e2e_web

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/wire"
)

// On the page, as a person uses them: fork at a reply (the fork holds the
// parent's history up to the end of that turn, byte for byte, and says
// where it came from, with a jump back), regenerate a user's message (its
// input runs again in a fork) and edit one (a fork just before it, its
// text in the composer, sent changed); the tree lists all three forks.
// The original is left as it was.
func TestWebForkRegenerateAndEdit(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s"})
	for _, text := range []string{"first question", "second question"} {
		if _, err := fx.c.PutInput(fx.ctx, "s", uuid.NewString(), text); err != nil {
			t.Fatal(err)
		}
		waitTurnsClosed(t, fx.ctx, fx.c, "s", 1+strings.Count(text, "second"))
	}
	parent := pageEventsOf(t, fx, "s")
	end := closedTurn(waitTurnsClosed(t, fx.ctx, fx.c, "s", 2), 1)
	b := startBrowser(t)
	p := b.open(ownerLink(t, fx.home, "s"))
	p.waitOpen("s")
	p.wait("both replies", `document.querySelectorAll('article[data-role=assistant]').length === 2`)

	click := func(role string, n int, act string) {
		t.Helper()
		if !eval[bool](p, fmt.Sprintf(`(() => { const b = document.querySelectorAll('article[data-role=%s]')[%d]?.querySelector('.msg-actions button[data-act=%s]'); b?.click(); return !!b })()`, role, n, act)) {
			t.Fatalf("no %s button on %s message %d", act, role, n)
		}
	}
	// Fork at the first reply: up to the close of its turn.
	click("assistant", 0, "fork")
	p.wait("the fork, open", `window.albedo.current !== 's' && document.querySelector('#parent').textContent === '← s #`+fmt.Sprint(end)+`'`)
	forked := eval[string](p, `window.albedo.current`)
	if got := pageEventsOf(t, fx, forked); strings.Join(got, "\n") != strings.Join(parent[:end], "\n") {
		t.Fatalf("the fork holds\n%s\nwant the parent's first %d\n%s", strings.Join(got, "\n"), end, strings.Join(parent[:end], "\n"))
	}
	p.wait("its messages", `document.querySelectorAll('article[data-role=assistant]').length === 1`)
	eval[bool](p, `(document.querySelector('#parent').click(), true)`)
	p.wait("the parent, open again", `window.albedo.current === 's'`)

	// Regenerate the first question.
	p.wait("the parent's messages", `document.querySelectorAll('article[data-role=assistant]').length === 2`)
	click("user", 0, "regenerate")
	p.wait("the regenerated reply", `window.albedo.current !== 's' && window.albedo.current !== '`+forked+`' &&
		document.querySelectorAll('article[data-role=assistant]').length === 1 && document.querySelectorAll('article[data-role=user]').length === 1`)
	regen := eval[string](p, `window.albedo.current`)
	closes := 0
	for _, ev := range waitTurnsClosed(t, fx.ctx, fx.c, regen, 1) {
		if ev.Type == wire.EventTurn && ev.State == wire.TurnCompleted {
			closes++
		}
	}
	if closes != 1 {
		t.Fatalf("the regenerated fork closed %d turns", closes)
	}

	// Edit the second question.
	eval[bool](p, `(document.querySelector('#parent').click(), true)`)
	p.wait("the parent, open again", `window.albedo.current === 's' && document.querySelectorAll('article[data-role=user]').length === 2`)
	click("user", 1, "edit")
	p.wait("the edit's fork, the text in the composer", `window.albedo.current !== 's' && document.querySelector('#input').value === 'second question'`)
	edited := eval[string](p, `window.albedo.current`)
	eval[bool](p, `(document.querySelector('#input').value = 'second question, edited', document.querySelector('#send').click(), true)`)
	evs := waitTurnsClosed(t, fx.ctx, fx.c, edited, 2)
	if last := evs[len(evs)-2]; last.Role != wire.RoleAssistant || !strings.Contains(last.Text, "second question, edited") {
		t.Fatalf("the edit's reply: %+v", last)
	}
	if now := pageEventsOf(t, fx, "s"); strings.Join(now, "\n") != strings.Join(parent, "\n") {
		t.Fatalf("the parent changed:\n%s", strings.Join(now, "\n"))
	}

	eval[bool](p, `(document.querySelector('#parent').click(), true)`)
	p.wait("the parent", `window.albedo.current === 's'`)
	eval[bool](p, `(document.querySelector('#treebutton').click(), true)`)
	p.wait("the tree: three forks", `!document.querySelector('#tree').hidden && document.querySelectorAll('#tree button').length === 3`)
	if ex := p.exceptions(); len(ex) > 0 {
		t.Fatalf("the page threw: %v", ex)
	}
}

// Edit is for your own messages: on the owner's page the owner's message
// offers it and a member's does not, and on the member's page the other
// way round; fork and regenerate are for everyone's.
func TestWebEditIsForYourOwnMessages(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s"})
	annToken, annLink := writer(t, fx.home, "ann", "s")
	ann, err := client.New(client.Options{Home: fx.home, Token: annToken})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.NewString(), "the owner's words"); err != nil {
		t.Fatal(err)
	}
	if _, err := ann.PutInput(fx.ctx, "s", uuid.NewString(), "ann's words"); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t)
	for _, c := range []struct {
		link, mine, theirs string
	}{{ownerLink(t, fx.home, "s"), "the owner's words", "ann's words"}, {annLink, "ann's words", "the owner's words"}} {
		p := b.open(c.link)
		p.waitOpen("s")
		acts := func(text string) string {
			return `[...document.querySelectorAll('article[data-role=user]')].filter(a => a.innerText.includes(` + jsString(text) + `))
				.map(a => [...a.querySelectorAll('.msg-actions button')].map(b => b.dataset.act).join(',')).join('|')`
		}
		p.wait("edit on "+c.mine+" only", acts(c.mine)+` === 'fork,regenerate,edit' && `+acts(c.theirs)+` === 'fork,regenerate'`)
		if ex := p.exceptions(); len(ex) > 0 {
			t.Fatalf("the page threw: %v", ex)
		}
	}
}

// The tree panel goes with the session it was opened on: after it lists
// a fork's parent, opening a session that is no fork shows no tree.
func TestWebTreeGoesWithItsSession(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s"})
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.NewString(), "a question"); err != nil {
		t.Fatal(err)
	}
	waitTurnsClosed(t, fx.ctx, fx.c, "s", 1)
	if _, err := fx.c.CreateSession(fx.ctx, "plain", wire.SessionCreate{Title: "plain"}); err != nil {
		t.Fatal(err)
	}
	f, err := fx.c.Fork(fx.ctx, "s", wire.ForkRequest{At: 1})
	if err != nil {
		t.Fatal(err)
	}
	fork := f.ID
	p := startBrowser(t).open(ownerLink(t, fx.home, fork))
	p.wait("the fork, open", `window.albedo.current === `+jsString(fork))
	eval[bool](p, `(document.querySelector('#treebutton').click(), true)`)
	p.wait("the tree: the parent", `!document.querySelector('#tree').hidden && document.querySelector('#tree').innerText.includes('parent, at #1')`)
	p.wait("plain in the list", `!!document.querySelector('#sessions li[data-session=plain] button')`)
	eval[bool](p, `(document.querySelector('#sessions li[data-session=plain] button').click(), true)`)
	p.wait("plain, open, and no tree", `window.albedo.current === 'plain' && document.querySelector('#tree').hidden && !document.querySelector('#tree').innerText.includes('parent')`)
}
