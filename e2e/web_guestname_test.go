//go:build !e2e_only || e2e_web

package e2e

import (
	"strings"
	"testing"

	"albedo/wire"
)

// writeLink is albedo share --write's link to session, labelled label.
func writeLink(t *testing.T, home, session, label string) string {
	t.Helper()
	return strings.TrimSpace(lastLine(cli(t, home, "share", "--write", "--label", label, session)))
}

// A write link's holder names themselves in the page, not in a browser
// prompt: a name the daemon refuses (a member's) is asked again with its
// reason; the name taken is remembered for that link, not for another,
// and the link's token is not what remembers it.
func TestWebGuestNamesThemselvesInThePage(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "open door"}})
	writer(t, fx.home, "ann", "s")
	link := writeLink(t, fx.home, "s", "first")
	b := startBrowser(t)
	p := b.open(link)
	ask := `!document.querySelector('#guestform').hidden && document.querySelector('#app').hidden`
	p.wait("the page asking for a name", ask)
	name := func(n string) {
		t.Helper()
		eval[bool](p, `(() => { document.querySelector('#guestname').value = `+jsString(n)+`; document.querySelector('#guestform button').click(); return true })()`)
	}
	name("ann")
	p.wait("ann refused, with the reason", ask+` && document.querySelector('#guesterror').textContent.includes('pick another name')`)
	name("zed")
	p.waitOpen("open door")
	p.wait("you are zed", `document.querySelector('#guestform').hidden && document.querySelector('#you').textContent === 'you are zed (guest)'`)
	eval[bool](p, `(() => { document.querySelector('#input').value = 'hello from zed'; document.querySelector('#send').click(); return true })()`)
	p.wait("zed's message", `[...document.querySelectorAll('article[data-role=user] header')].some(h => h.textContent.startsWith('user · zed (guest)'))`)
	token := strings.SplitN(strings.SplitN(link, "token=", 2)[1], "&", 2)[0]
	if stored := eval[string](p, `JSON.stringify(Object.entries(localStorage))`); strings.Contains(stored, token) {
		t.Fatalf("localStorage holds the link's token: %s", stored)
	}

	again := b.open(link)
	again.waitOpen("open door")
	again.wait("zed, not asked again", `document.querySelector('#guestform').hidden && document.querySelector('#you').textContent === 'you are zed (guest)'`)

	other := b.open(writeLink(t, fx.home, "s", "second"))
	other.wait("another link asking for a name", ask)
	for _, q := range []*page{p, again, other} {
		if ex := q.exceptions(); len(ex) > 0 {
			t.Fatalf("the page threw: %v", ex)
		}
	}
}
