package term

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/wire"
)

// menuNames is what the slash menu lists for what the composer holds.
func menuNames(m *Model, typed string) []string {
	m.setComposer(typed)
	var out []string
	for _, c := range m.menu() {
		out = append(out, c.name())
	}
	return out
}

// The commands of sharing are offered to whoever may run them: an admin
// gets /invite and, in every session, /grant, /link and the rest; a
// member gets these in the sessions they made, and none in a session
// given to them, nor /invite; a viewer's link none. Typed all the same,
// they are refused in words, and nothing is asked of the daemon.
func TestSharingIsOfferedToWhoMayShare(t *testing.T) {
	t.Parallel()
	all := []string{"/grant", "/grants", "/link", "/links", "/revoke", "/ungrant", "/invite"}
	cases := []struct {
		name   string
		role   wire.TokenRole
		access wire.Access
		view   bool
		want   []string
	}{
		{"admin", wire.TokenOwner, wire.AccessCreator, false, all},
		{"creator", wire.TokenMember, wire.AccessCreator, false, all[:6]},
		{"writer", wire.TokenMember, wire.AccessWrite, false, nil},
		{"viewer", wire.TokenViewer, wire.AccessRead, true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := demo()
			m.Conn.Role, m.ReadOnly = tc.role, tc.view
			m.Sessions[0].Access = tc.access
			var got []string
			for _, p := range []string{"/g", "/l", "/r", "/u", "/i"} {
				for _, n := range menuNames(m, p) {
					if slices.Contains(all, n) {
						got = append(got, n)
					}
				}
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Fatalf("the menu offers %v, want %v", got, want)
			}
			if len(tc.want) == 0 {
				if cmds := runLine(m, "/grant bob read"); cmds != nil || !m.NoticeErr {
					t.Fatalf("/grant by a %s: %#v, notice %q", tc.name, cmds, m.Notice)
				}
			}
			if !slices.Contains(tc.want, "/invite") {
				if cmds := runLine(m, "/invite bob"); cmds != nil || !m.NoticeErr || tc.name == "writer" && m.Notice != "only an admin may invite people" {
					t.Fatalf("/invite by a %s: %#v, notice %q", tc.name, cmds, m.Notice)
				}
			}
		})
	}
}

// What each command asks the daemon for, and what it refuses first.
func TestSharingCommands(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Conn.Role = wire.TokenOwner
	m.Sessions[0].Access = wire.AccessCreator
	for _, tc := range []struct {
		line string
		want Cmd
	}{
		{"/invite bob", cmdInvite{Name: "bob"}},
		{"/invite bob write", cmdInvite{Name: "bob", Access: wire.AccessWrite, Session: "s-aaaaaaaa"}},
		{"/grant @bob read", cmdGrant{Session: "s-aaaaaaaa", Member: "bob", Access: wire.AccessRead}},
		{"/grant bob WRITE", cmdGrant{Session: "s-aaaaaaaa", Member: "bob", Access: wire.AccessWrite}},
		{"/ungrant bob", cmdGrant{Session: "s-aaaaaaaa", Member: "bob"}},
		{"/grants", cmdGrants{Session: "s-aaaaaaaa"}},
		{"/link", cmdLink{Session: "s-aaaaaaaa", Access: wire.AccessRead}},
		{"/link write", cmdLink{Session: "s-aaaaaaaa", Access: wire.AccessWrite}},
		{"/links", cmdLinks{Session: "s-aaaaaaaa"}},
		{"/revoke link-123abc", cmdRevoke{Session: "s-aaaaaaaa", Label: "link-123abc"}},
	} {
		if cmds := runLine(m, tc.line); len(cmds) != 1 || cmds[0] != tc.want {
			t.Errorf("%s: %#v", tc.line, cmds)
		}
	}
	for _, line := range []string{"/invite", "/invite bob admin", "/grant bob", "/grant bob owner", "/ungrant", "/link forever", "/revoke"} {
		if cmds := runLine(m, line); cmds != nil || !m.NoticeErr || !strings.Contains(m.Notice, "usage: ") {
			t.Errorf("%s: %#v, notice %q", line, cmds, m.Notice)
		}
	}
}

// A link or an invite made is copied, and said whole with the command
// that ends it; a refusal is said in words.
func TestSharingResultsAreSaid(t *testing.T) {
	t.Parallel()
	m := demo()
	link := "http://127.0.0.1:1/#session=s&token=alview_x"
	cmds := m.Result(resLinked{Link: wire.LinkCreated{Link: wire.Link{Label: "link-1a2b3c", Access: wire.AccessWrite}}, URL: link})
	if c, ok := only[cmdCopy](cmds); !ok || c.Text != link {
		t.Fatalf("a link made: %#v", cmds)
	}
	if bar := said(t, m); !strings.Contains(bar, link) || !strings.Contains(bar, "/revoke link-1a2b3c") || !strings.Contains(bar, "write link") {
		t.Fatalf("the link is said as %q", bar)
	}
	cmds = m.Result(resInvited{Member: wire.MemberCreated{Name: "bob"}, URL: link, Access: wire.AccessRead})
	if c, ok := only[cmdCopy](cmds); !ok || c.Text != link || !strings.Contains(m.Notice, "“bob” added and may read this session") {
		t.Fatalf("an invite: %#v, %q", cmds, m.Notice)
	}
	for _, tc := range []struct {
		r    any
		want string
	}{
		{resInvited{Member: wire.MemberCreated{Name: "bob"}, Err: &client.Error{Code: wire.CodeConflict, Status: 409}}, "a member named “bob” already exists"},
		{resGranted{Member: "zed", Access: wire.AccessRead, Err: &client.Error{Code: wire.CodeNotFound, Status: 404}}, "no member is named “zed”"},
		{resGranted{Member: "zed", Err: &client.Error{Code: wire.CodeNotFound, Status: 404}}, "zed has no access to this session to take back"},
		{resRevoked{Label: "nope", Err: &client.Error{Code: wire.CodeNotFound, Status: 404}}, "this session has no link labelled “nope”"},
		{resGrants{Err: &client.Error{Code: wire.CodeForbidden, Status: 403, Message: "only the session's creator may call GET /v1/sessions/:id/grants"}}, "only the session's creator or an admin may do that"},
	} {
		m.Result(tc.r)
		if !m.NoticeErr || !strings.Contains(m.Notice, tc.want) || strings.Contains(m.Notice, "40") {
			t.Errorf("%T: %q, want %q", tc.r, m.Notice, tc.want)
		}
	}
	m.Result(resGrants{List: []wire.Grant{{Member: "ann", Access: wire.AccessCreator}, {Member: "bob", Access: wire.AccessWrite}}})
	if m.Notice != "access: ann creator · bob write" {
		t.Fatalf("grants: %q", m.Notice)
	}
}

// On the real daemon stack: an invite adds the member and gives them the
// session, their link opening it with the home's daemon key; an invite to
// no session gives the daemon's link with that key too, as the CLI's
// does; a link made is one the daemon lists, with the key; revoking it
// ends it.
func TestAppSharesOnTheDaemon(t *testing.T) {
	t.Parallel()
	c := daemonIn(t)
	ctx := context.Background()
	if _, err := c.CreateSession(ctx, "s", wire.SessionCreate{Title: "plans"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.Home(), "daemon.key"), []byte("beef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newApp(ctx, Options{Client: c}, tcell.NewSimulationScreen("UTF-8"))
	defer a.stop()

	a.run([]Cmd{cmdInvite{Name: "bob", Access: wire.AccessWrite, Session: "s"}})
	inv := awaitMsg[resInvited](t, a)
	if inv.Err != nil || inv.GrantErr != nil || !strings.Contains(inv.URL, "#session=s&token=almem_") || !strings.HasSuffix(inv.URL, "&k=beef") {
		t.Fatalf("invite: %+v", inv)
	}
	a.run([]Cmd{cmdInvite{Name: "carol"}})
	if inv := awaitMsg[resInvited](t, a); inv.Err != nil || !strings.Contains(inv.URL, "/#token=almem_") || !strings.HasSuffix(inv.URL, "&k=beef") {
		t.Fatalf("invite to no session: %+v", inv)
	}
	a.run([]Cmd{cmdGrants{Session: "s"}})
	if gs := awaitMsg[resGrants](t, a); gs.Err != nil || !slices.ContainsFunc(gs.List, func(g wire.Grant) bool { return g.Member == "bob" && g.Access == wire.AccessWrite }) {
		t.Fatalf("grants: %+v", gs)
	}
	a.run([]Cmd{cmdLink{Session: "s", Access: wire.AccessRead}})
	l := awaitMsg[resLinked](t, a)
	if l.Err != nil || !strings.Contains(l.URL, "#session=s&token=") || !strings.HasSuffix(l.URL, "&k=beef") {
		t.Fatalf("link: %+v", l)
	}
	a.run([]Cmd{cmdRevoke{Session: "s", Label: l.Link.Label}})
	if r := awaitMsg[resRevoked](t, a); r.Err != nil {
		t.Fatal(r.Err)
	}
	a.run([]Cmd{cmdLinks{Session: "s"}})
	if ls := awaitMsg[resLinks](t, a); ls.Err != nil || len(ls.List) != 0 {
		t.Fatalf("links after the revoke: %+v", ls)
	}
}
