//go:build !e2e_only || e2e_web

package e2e

import (
	"strings"
	"testing"

	"albedo/wire"
)

// listedFirst is true in the page when the list's first session is id,
// marked pinned (★) or not.
func listedFirst(id string, pinned bool) string {
	mark := `!document.querySelector('#sessions li .pin')`
	if pinned {
		mark = `document.querySelector('#sessions li')?.querySelector('.pin')?.textContent === '★'`
	}
	return `document.querySelector('#sessions li')?.dataset.session === ` + jsString(id) + ` && ` + mark
}

// threeSessions is a daemon with sessions a ("alpha"), b ("beta") and c
// ("gamma"), made in that order (so listed gamma first), each with a
// message.
func threeSessions(t *testing.T) *fixture {
	t.Helper()
	fx := newFixture(t, fixtureOpts{session: "a", create: wire.SessionCreate{Title: "alpha"}})
	cli(t, fx.home, "send", "a", "the needle words")
	for _, s := range []struct{ id, title string }{{"b", "beta"}, {"c", "gamma"}} {
		if _, err := fx.c.CreateSession(fx.ctx, s.id, wire.SessionCreate{Title: s.title}); err != nil {
			t.Fatal(err)
		}
		cli(t, fx.home, "send", s.id, "hello")
	}
	return fx
}

// A session pinned from the page goes first in its list, marked ★, and in
// the list of the person's other pages as it is pinned (the feed's push);
// one pinned elsewhere (the CLI) shows here the same way; unpinned, it
// goes back to its place by activity.
func TestWebPinsSessions(t *testing.T) {
	parallel(t)
	fx := threeSessions(t)
	b := startBrowser(t)
	p := b.open(ownerLink(t, fx.home, "a"))
	p.waitOpen("alpha")
	other := b.open(ownerLink(t, fx.home, "a"))
	other.waitOpen("alpha")
	p.wait("gamma first, nothing pinned", listedFirst("c", false)+` && document.querySelector('#pinbutton').textContent === 'pin'`)

	eval[bool](p, `(document.querySelector('#pinbutton').click(), true)`)
	p.wait("alpha first, pinned", listedFirst("a", true)+` && document.querySelector('#pinbutton').textContent === '★ unpin' &&
		document.querySelector('#pinbutton').getAttribute('aria-pressed') === 'true'`)
	other.wait("alpha pinned on the other page too", listedFirst("a", true)+` && document.querySelector('#pinbutton').textContent === '★ unpin'`)
	if out := cli(t, fx.home, "sessions"); !strings.Contains(strings.Split(out, "\n")[1], "★") {
		t.Fatalf("the daemon has no pin:\n%s", out)
	}

	cli(t, fx.home, "sessions", "pin", "b")
	p.wait("beta pinned from the CLI", `document.querySelectorAll('#sessions li.pinned').length === 2 &&
		[...document.querySelectorAll('#sessions li')].slice(0, 2).every(li => li.classList.contains('pinned')) &&
		document.querySelector('#sessions li:nth-child(3)').dataset.session === 'c'`)
	p.screenshot("web-pins")

	eval[bool](other, `(document.querySelector('#pinbutton').click(), true)`)
	other.wait("alpha unpinned", `document.querySelector('#pinbutton').textContent === 'pin' &&
		[...document.querySelectorAll('#sessions li')].map(li => li.dataset.session).join() === 'b,c,a'`)
	p.wait("alpha unpinned on the first page too", `[...document.querySelectorAll('#sessions li')].map(li => li.dataset.session).join() === 'b,c,a' &&
		document.querySelector('#sessions li[data-session=a] .pin') === null`)
	if ex := p.exceptions(); len(ex) > 0 {
		t.Fatalf("the page threw: %v", ex)
	}
}

// Archiving is offered to the session's creator and admins, not to a
// member who may write in it. Archived from the page, a session leaves
// its list at once and the person's other page's (the feed's push); the
// archived view under the list holds it, opens it and brings it back; a
// search hit in it still opens it.
func TestWebArchivesSessions(t *testing.T) {
	parallel(t)
	fx := threeSessions(t)
	_, annLink := writer(t, fx.home, "ann", "a")
	b := startBrowser(t)
	ann := b.open(annLink)
	ann.wait("ann's page on alpha", `document.querySelector('#conn').textContent === 'connected' && document.querySelector('#title').textContent === 'alpha'`)
	ann.wait("no archive for a writer", `!(`+laidOut("#archivebutton")+`) && `+laidOut("#pinbutton"))

	p := b.open(ownerLink(t, fx.home, "a"))
	p.waitOpen("alpha")
	other := b.open(ownerLink(t, fx.home, "c"))
	other.waitOpen("gamma")
	p.wait("archive offered", laidOut("#archivebutton")+` && document.querySelector('#archivebutton').textContent === 'archive'`)

	eval[bool](p, `(document.querySelector('#archivebutton').click(), true)`)
	p.wait("alpha gone from the list", `!document.querySelector('#sessions li[data-session=a]') && document.querySelector('#title').textContent !== 'alpha' &&
		document.querySelector('#notice').textContent.startsWith('“alpha” was archived')`)
	other.wait("alpha gone from the other page", `document.querySelectorAll('#sessions li').length === 2 && !document.querySelector('#sessions li[data-session=a]')`)
	if s, err := fx.c.Session(fx.ctx, "a"); err != nil || !s.Archived {
		t.Fatalf("alpha archived: %v, %v", s.Archived, err)
	}

	// The archived view lists it, and opens it.
	eval[bool](p, `(document.querySelector('#archivedtoggle').click(), true)`)
	p.wait("the archived view", laidOut("#archived li[data-session=a] button.open")+` && !(`+laidOut("#sessions")+`) &&
		document.querySelectorAll('#archived li').length === 1 && document.querySelector('#archivedtoggle').textContent === '← sessions'`)
	eval[bool](p, `(document.querySelector('#archived li[data-session=a] button.open').click(), true)`)
	p.wait("alpha open, archived", `document.querySelector('#title').textContent === 'alpha' && document.querySelector('#settings').textContent.startsWith('archived · ') &&
		document.querySelector('#archivebutton').textContent === 'unarchive'`)

	// A search hit in it opens it on the other page.
	eval[bool](other, `(() => { document.querySelector('#search').value = 'needle'; document.querySelector('#searchform').requestSubmit(); return true })()`)
	other.wait("the hit", `!!document.querySelector('#hits li[data-session=a] button')`)
	eval[bool](other, `(document.querySelector('#hits li[data-session=a] button').click(), true)`)
	other.wait("alpha open from the hit", `document.querySelector('#title').textContent === 'alpha' && document.querySelector('#settings').textContent.startsWith('archived · ')`)

	// Brought back from the archived view, it is listed again everywhere.
	eval[bool](p, `(document.querySelector('#archived li[data-session=a] button.unarchive').click(), true)`)
	p.wait("the archived view empty", `document.querySelector('#archived').textContent === 'no archived session'`)
	eval[bool](p, `(document.querySelector('#archivedtoggle').click(), true)`)
	p.wait("alpha back, not archived", `!!document.querySelector('#sessions li[data-session=a]') && !document.querySelector('#sessions li[data-session=a] .archived') &&
		!document.querySelector('#settings').textContent.startsWith('archived') && document.querySelector('#archivebutton').textContent === 'archive'`)
	eval[bool](other, `(document.querySelector('#sessions li[data-session=c] button').click(), true)`)
	other.wait("alpha listed on the other page", `document.querySelectorAll('#sessions li').length === 3 && !document.querySelector('#sessions .archived')`)
	if s, err := fx.c.Session(fx.ctx, "a"); err != nil || s.Archived {
		t.Fatalf("alpha still archived: %v, %v", s.Archived, err)
	}
	if ex := p.exceptions(); len(ex) > 0 {
		t.Fatalf("the page threw: %v", ex)
	}
}
