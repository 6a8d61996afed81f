//go:build !e2e_only || e2e_web

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"albedo/client"
	"albedo/wire"
)

// grantsOf is a session's grants as "member:access" in the daemon's order.
func grantsOf(t *testing.T, fx *fixture, session string) string {
	t.Helper()
	gs, err := fx.c.Grants(fx.ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range gs {
		out = append(out, g.Member+":"+string(g.Access))
	}
	return strings.Join(out, " ")
}

// grantsUntil reads session's grants until ok says they are what the
// page's request made them (the page shows a change before its request
// is answered), failing after 10 s; it returns them.
func grantsUntil(t *testing.T, fx *fixture, session string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g := grantsOf(t, fx, session)
		if ok(g) || time.Now().After(deadline) {
			return g
		}
		time.Sleep(20 * time.Millisecond) // a poll of the store, bounded by the deadline
	}
}

// Sharing from the page, as its owner does it: invite a new member, who is
// given the session and whose link opens the page as them; give a member
// read access, change it to write, take it back; make a write link, which
// opens the page as a guest, and revoke it. Links and invites come with a
// copy button. A member who may write in a session is not offered sharing
// it; one who made a session is, without inviting.
func TestWebSharesFromThePage(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "shared"}})
	me := homeMember(t, fx)
	if _, err := fx.c.CreateSession(fx.ctx, "w", wire.SessionCreate{Title: "written"}); err != nil {
		t.Fatal(err)
	}
	annToken, annLink := writer(t, fx.home, "ann", "w")
	ann, err := client.New(client.Options{Home: fx.home, Token: annToken})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ann.CreateSession(fx.ctx, "mine", wire.SessionCreate{Title: "mine"}); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t)
	p := b.open(ownerLink(t, fx.home, "s"))
	p.waitOpen("shared")
	p.wait("the share button", laidOut("#sharebutton"))
	eval[bool](p, `(document.querySelector('#sharebutton').click(), true)`)
	p.wait("the panel, the creator first", laidOut("#share")+` && document.querySelector('#grants li')?.textContent === `+jsString(me+"creator")+` && `+laidOut("#inviteform"))
	form := func(id string, fields map[string]string) {
		t.Helper()
		js := ""
		for k, v := range fields {
			js += fmt.Sprintf(`document.querySelector('#%s').value = %s;`, k, jsString(v))
		}
		eval[bool](p, `(() => { `+js+` document.querySelector('#`+id+` button[type=submit]').click(); return true })()`)
	}

	form("inviteform", map[string]string{"invitename": "bea", "inviteaccess": "read"})
	p.wait("bea's invite, with its link and copy button", `(document.querySelector('#invites li[data-member=bea] .url')?.textContent || '').includes('token=almem_') &&
		!!document.querySelector('#invites li[data-member=bea] button.copy') && !!document.querySelector('#grants li[data-member=bea]')`)
	if g := grantsOf(t, fx, "s"); g != me+":creator bea:read" {
		t.Fatalf("grants after the invite: %s", g)
	}
	bea := b.open(eval[string](p, `document.querySelector('#invites li[data-member=bea] .url').textContent`))
	bea.waitOpen("shared")
	bea.wait("bea's page", `document.querySelector('#you').textContent === 'you are bea' && document.querySelector('#input').disabled`)

	form("grantform", map[string]string{"grantname": "ann", "grantaccess": "read"})
	p.wait("ann, reading", `document.querySelector('#grants li[data-member=ann] select')?.value === 'read'`)
	if g := grantsUntil(t, fx, "s", func(g string) bool { return strings.Contains(g, "ann:read") }); !strings.Contains(g, "ann:read") {
		t.Fatalf("grants: %s", g)
	}
	eval[bool](p, `(() => { const s = document.querySelector('#grants li[data-member=ann] select'); s.value = 'write'; s.dispatchEvent(new Event('change')); return true })()`)
	p.wait("ann, writing", `document.querySelector('#grants li[data-member=ann] select')?.value === 'write' && !document.querySelector('#notice').classList.contains('error')`)
	if g := grantsUntil(t, fx, "s", func(g string) bool { return strings.Contains(g, "ann:write") }); !strings.Contains(g, "ann:write") {
		t.Fatalf("grants: %s", g)
	}
	eval[bool](p, `(document.querySelector('#grants li[data-member=ann] button').click(), true)`)
	p.wait("ann, gone", `!document.querySelector('#grants li[data-member=ann]')`)
	if g := grantsUntil(t, fx, "s", func(g string) bool { return !strings.Contains(g, "ann") }); strings.Contains(g, "ann") {
		t.Fatalf("grants after the removal: %s", g)
	}

	form("linkform", map[string]string{"linkaccess": "write", "linklabel": "door"})
	p.wait("the write link, with its address", `(document.querySelector('#links li[data-label=door] .url')?.textContent || '').includes('token=alguest_') &&
		document.querySelector('#links li[data-label=door] .access').textContent === 'write (guests)'`)
	if ls, err := fx.c.Links(fx.ctx, "s"); err != nil || len(ls) != 1 || ls[0].Label != "door" || ls[0].Access != wire.AccessWrite {
		t.Fatalf("links %+v (%v)", ls, err)
	}
	p.screenshot("web-share")
	guest := b.open(eval[string](p, `document.querySelector('#links li[data-label=door] .url').textContent`))
	guest.wait("the guest's page asking a name", `!document.querySelector('#guestform').hidden`)
	eval[bool](p, `(document.querySelector('#links li[data-label=door] button:not(.copy)').click(), true)`)
	p.wait("the link, revoked", `!document.querySelector('#links li')`)
	if ls, err := fx.c.Links(fx.ctx, "s"); err != nil || len(ls) != 0 {
		t.Fatalf("links after the revoke %+v (%v)", ls, err)
	}

	// Ann writes in w (not hers to share) and made "mine" (hers).
	ap := b.open(annLink)
	ap.wait("connected", `document.querySelector('#conn').textContent === 'connected'`)
	openIn(ap, "w")
	ap.wait("no sharing in w", `!`+laidOut("#sharebutton")+` && `+laidOut("#treebutton"))
	openIn(ap, "mine")
	ap.wait("sharing in mine", laidOut("#sharebutton"))
	eval[bool](ap, `(document.querySelector('#sharebutton').click(), true)`)
	ap.wait("ann's panel, no invites", `document.querySelector('#grants li')?.textContent === 'anncreator' && !`+laidOut("#inviteform"))
	for _, q := range []*page{p, bea, guest, ap} {
		if ex := q.exceptions(); len(ex) > 0 {
			t.Fatalf("the page threw: %v", ex)
		}
	}
}
