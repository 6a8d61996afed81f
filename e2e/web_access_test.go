//go:build !e2e_only || e2e_web

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"albedo/client"
	"albedo/wire"
)

// laidOut is true in the page when the element sel selects is laid out.
func laidOut(sel string) string {
	return fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.getClientRects().length > 0 })()`, sel)
}

// openIn opens session id from the page's list, once it is listed.
func openIn(p *page, id string) {
	p.t.Helper()
	li := `#sessions li[data-session=` + jsString(id) + `] button`
	p.wait(id+" listed", `!!document.querySelector('`+li+`')`)
	eval[bool](p, `(document.querySelector('`+li+`').click(), true)`)
	p.wait(id+" open", `window.albedo.current === `+jsString(id))
}

// The page offers what the person may do in the session open, as the
// daemon's rules say (api/auth.go): rename, settings and delete to its
// creator and admins, compact to those who may write, the tree to all.
// A refusal, from a page that offered what it should not, speaks of
// people, not of routes; and the header says who the page writes as.
func TestWebOffersWhatYouMayDo(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "shared"}})
	me := homeMember(t, fx) // the first member, before ann
	annToken, annLink := writer(t, fx.home, "ann", "s")
	if _, err := fx.c.CreateSession(fx.ctx, "r", wire.SessionCreate{Title: "watched"}); err != nil {
		t.Fatal(err)
	}
	if err := fx.c.Grant(fx.ctx, "r", "ann", wire.AccessRead); err != nil {
		t.Fatal(err)
	}
	ann, err := client.New(client.Options{Home: fx.home, Token: annToken})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ann.CreateSession(fx.ctx, "mine", wire.SessionCreate{Title: "mine"}); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t)
	offers := func(p *page, want string) string {
		var js []string
		for _, id := range []string{"rename", "edit", "compact", "delete", "treebutton"} {
			js = append(js, fmt.Sprintf(`(%s ? %q : '')`, laidOut("#"+id), id))
		}
		return `[` + strings.Join(js, ",") + `].filter(Boolean).join(' ') === ` + jsString(want)
	}

	owner := b.open(ownerLink(t, fx.home, "s"))
	owner.waitOpen("shared")
	owner.wait("every action", offers(owner, "rename edit compact delete treebutton"))
	owner.wait("you are the home's member", `document.querySelector('#you').textContent === `+jsString("you are "+me))

	p := b.open(annLink)
	p.wait("connected", `document.querySelector('#conn').textContent === 'connected'`)
	p.wait("you are ann", `document.querySelector('#you').textContent === 'you are ann'`)
	openIn(p, "mine")
	p.wait("the creator's actions", offers(p, "rename edit compact delete treebutton"))
	openIn(p, "s")
	p.wait("a writer's actions", offers(p, "compact treebutton")+` && document.querySelector('#editor').hidden`)
	openIn(p, "r")
	p.wait("a reader's actions", offers(p, "treebutton"))

	// A page that offered delete all the same is refused in words.
	openIn(p, "s")
	eval[bool](p, `(() => { window.confirm = () => true; const d = document.querySelector('#delete'); d.hidden = false; d.closest('.actions').hidden = false; d.click(); return true })()`)
	p.wait("the refusal", `document.querySelector('#notice').classList.contains('error') && document.querySelector('#notice').textContent !== ''`)
	said := eval[string](p, `document.querySelector('#notice').textContent`)
	for _, bad := range []string{"/v1/", "DELETE", "403", ":id"} {
		if strings.Contains(said, bad) {
			t.Fatalf("the refusal names %q: %s", bad, said)
		}
	}
	if !strings.Contains(said, "creator") {
		t.Fatalf("the refusal does not say who may: %s", said)
	}
	if _, err := fx.c.Session(fx.ctx, "s"); err != nil {
		t.Fatalf("s after the refused delete: %v", err)
	}
	if ex := p.exceptions(); len(ex) > 0 {
		t.Fatalf("the page threw: %v", ex)
	}
}

// A member whose grant is removed is told their access was removed, not
// that the session was deleted, and keeps what they were typing.
func TestWebRevokedAccessIsNoDeletion(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "other", create: wire.SessionCreate{Title: "other"}})
	_, link := writer(t, fx.home, "ann", "other")
	if _, err := fx.c.CreateSession(fx.ctx, "plan", wire.SessionCreate{Title: "plan"}); err != nil {
		t.Fatal(err)
	}
	if err := fx.c.Grant(fx.ctx, "plan", "ann", wire.AccessWrite); err != nil {
		t.Fatal(err)
	}
	p := startBrowser(t).open(link)
	p.wait("connected", `document.querySelector('#conn').textContent === 'connected'`)
	openIn(p, "plan")
	eval[bool](p, `(document.querySelector('#input').value = 'half a thought', true)`)
	if err := fx.c.Ungrant(fx.ctx, "plan", "ann"); err != nil {
		t.Fatal(err)
	}
	p.wait("plan gone, other open", `!document.querySelector('#sessions li[data-session=plan]') && window.albedo.current === 'other'`)
	said := eval[string](p, `document.querySelector('#notice').textContent`)
	if !strings.HasPrefix(said, "your access to “plan” was removed") || strings.Contains(said, "deleted") {
		t.Fatalf("the page says %q", said)
	}
	if d := eval[string](p, `document.querySelector('#input').value`); d != "half a thought" {
		t.Fatalf("the draft is %q", d)
	}
	if ex := p.exceptions(); len(ex) > 0 {
		t.Fatalf("the page threw: %v", ex)
	}
}
