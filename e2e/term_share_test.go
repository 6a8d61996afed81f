//go:build !e2e_only || e2e_term

package e2e

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"albedo/wire"
)

// accessOf is a session's grants as "member:access", in the daemon's
// order.
func accessOf(t *testing.T, fx *fixture, session string) string {
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

// fragmentOf is a page link's #fragment, as its values.
func fragmentOf(t *testing.T, link string) url.Values {
	t.Helper()
	u, err := url.Parse(strings.TrimSpace(link))
	if err != nil {
		t.Fatalf("a link that does not parse: %q: %v", link, err)
	}
	v, err := url.ParseQuery(u.Fragment)
	if err != nil {
		t.Fatalf("a link whose fragment does not parse: %q: %v", link, err)
	}
	return v
}

// Sharing from a real terminal, as its owner: the slash menu offers the
// commands; /invite adds a member, gives them the session and copies
// their link (to tmux's paste buffer), whose token opens a terminal as
// them; /grant narrows them to read; /link copies a link the daemon
// lists, /links names it and /revoke ends it; /ungrant takes the session
// back. The member, in the session given to them, is offered none of
// this, and a command typed all the same is refused in words.
func TestTerminalSharesASession(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "plans", create: wire.SessionCreate{Title: "plans"}})
	me := homeMember(t, fx)
	x := startTmux(t, fx.home, 140, 30)
	x.run("set-option", "-g", "set-clipboard", "on")
	x.waitPane("the session, connected", func(s string) bool {
		return strings.Contains(s, " connected") && strings.Contains(s, "plans") && strings.Contains(s, "message · /help")
	})
	x.keys("-l", "/gr")
	x.waitPane("the menu's grant commands", func(s string) bool {
		return strings.Contains(s, "/grant NAME …") && strings.Contains(s, "/grants ")
	})
	x.keys("C-u")

	buffer := func(what, holds string) string {
		t.Helper()
		var got string
		x.waitPane(what+" in tmux's paste buffer", func(string) bool {
			got = x.runQuiet("show-buffer")
			return strings.Contains(got, holds)
		})
		return strings.TrimSpace(got)
	}
	x.keys("-l", "/invite bob write")
	x.keys("Enter")
	x.waitPane("the invite, said", has("“bob” added and may write in this session; their link, shown this once, is copied"))
	invite := fragmentOf(t, buffer("the invite's link", "token=almem_"))
	if invite.Get("session") != "plans" {
		t.Fatalf("the invite opens %q", invite.Get("session"))
	}
	if got := accessOf(t, fx, "plans"); got != me+":creator bob:write" {
		t.Fatalf("after /invite: %s", got)
	}

	x.keys("-l", "/grant bob read")
	x.keys("Enter")
	x.waitPane("the grant, said", has("bob may now read this session"))
	if got := accessOf(t, fx, "plans"); got != me+":creator bob:read" {
		t.Fatalf("after /grant: %s", got)
	}

	x.keys("-l", "/link write")
	x.keys("Enter")
	x.waitPane("the link, said", has("write link (guests) “link-"))
	link := fragmentOf(t, buffer("the link", "token=alguest_"))
	links, err := fx.c.Links(fx.ctx, "plans")
	if err != nil || len(links) != 1 || links[0].Access != wire.AccessWrite || link.Get("session") != "plans" {
		t.Fatalf("links: %+v %v; the link copied: %v", links, err, link)
	}
	label := links[0].Label
	x.keys("-l", "/links")
	x.keys("Enter")
	x.waitPane("the links, listed", has("links: "+label+" write"))
	x.keys("-l", "/revoke "+label)
	x.keys("Enter")
	x.waitPane("the revoke, said", has("link “"+label+"” revoked"))
	if links, err := fx.c.Links(fx.ctx, "plans"); err != nil || len(links) != 0 {
		t.Fatalf("links after /revoke: %+v %v", links, err)
	}

	// The member, with the token of the link copied: read access.
	base, _ := daemonURL(t, fx.home)
	bob := startTmuxEnv(t, fmt.Sprintf("ALBEDO_HOME=%s ALBEDO_URL=%s ALBEDO_TOKEN=%s", t.TempDir(), base, invite.Get("token")), 120, 30)
	bob.waitPane("bob's terminal on the session", func(s string) bool {
		return strings.Contains(s, " connected") && strings.Contains(s, "plans") && strings.Contains(s, "read-only")
	})
	// The menu is drawn with the composer: by the time the composer
	// shows what was typed, the menu shows what it offers.
	bob.keys("-l", "/g")
	pane := bob.waitPane("/g typed", has("❯ /g"))
	bob.keys("C-u")
	bob.keys("-l", "/i")
	pane += bob.waitPane("/i typed", has("❯ /i"))
	if strings.Contains(pane, "/grant NAME") || strings.Contains(pane, "/grants") || strings.Contains(pane, "/invite") {
		t.Fatalf("bob is offered sharing:\n%s", pane)
	}
	bob.keys("C-u")
	bob.keys("-l", "/grant ann write")
	bob.keys("Enter")
	bob.waitPane("the refusal", has("only the session's creator or an admin may share it"))

	x.keys("-l", "/ungrant bob")
	x.keys("Enter")
	x.waitPane("the ungrant, said", has("bob no longer has access to this session"))
	bob.waitPane("bob's access, removed", has("your access to “plans” was removed"))
	if got := accessOf(t, fx, "plans"); got != me+":creator" {
		t.Fatalf("after /ungrant: %s", got)
	}
	x.keys("C-q")
	bob.keys("C-q")
}
