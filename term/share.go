package term

import (
	"fmt"
	"strings"

	"albedo/client"
	"albedo/wire"
)

// Sharing the focused session from the terminal, as albedo members add,
// albedo sessions grant and albedo share do (docs/protocol.md, "Members
// and grants"): /invite adds a member (admins), /grant, /ungrant and
// /grants give, take back and list the session's members, /link makes a
// read or a write link, /links and /revoke list and end them. An invite
// or a link holds a token the daemon shows once: it goes to the
// clipboard and into the notice. The slash menu offers these commands
// only to whoever may run them (offered): the session's creator and
// admins (its access "creator"), and /invite to admins alone.

// The Cmds and results of sharing.
type (
	cmdInvite struct {
		Name    string
		Access  wire.Access // also gives them Session; "" gives nothing
		Session string
	}
	cmdGrant struct {
		Session, Member string
		Access          wire.Access // "": take it back
	}
	cmdGrants struct{ Session string }
	cmdLink   struct {
		Session string
		Access  wire.Access
	}
	cmdLinks  struct{ Session string }
	cmdRevoke struct{ Session, Label string }

	resInvited struct {
		Member   wire.MemberCreated
		URL      string // their link: on the session given to them, else the daemon's
		Access   wire.Access
		Err      error
		GrantErr error // the member was added, the session not given
	}
	resGranted struct {
		Member string
		Access wire.Access
		Err    error
	}
	resGrants struct {
		List []wire.Grant
		Err  error
	}
	resLinked struct {
		Link wire.LinkCreated
		URL  string
		Err  error
	}
	resLinks struct {
		List []wire.Link
		Err  error
	}
	resRevoked struct {
		Label string
		Err   error
	}
)

func (cmdInvite) isCmd() {}
func (cmdGrant) isCmd()  {}
func (cmdGrants) isCmd() {}
func (cmdLink) isCmd()   {}
func (cmdLinks) isCmd()  {}
func (cmdRevoke) isCmd() {}

// shareCommands are the slash commands of sharing, in the help's order.
var shareCommands = []slashCommand{
	{"/invite NAME …", "admins: add a member, link copied; read|write: this too", (*Model).invite},
	{"/grant NAME …", "give member NAME this session: read, or write", (*Model).grant},
	{"/ungrant NAME", "take member NAME's access to this session back", (*Model).ungrant},
	{"/grants", "who has access to this session", func(m *Model, _ string) []Cmd {
		return []Cmd{cmdGrants{Session: m.Focused().ID}}
	}},
	{"/link [write]", "a link to this session, copied: read, or write for guests", (*Model).link},
	{"/links", "this session's links, by label", func(m *Model, _ string) []Cmd {
		return []Cmd{cmdLinks{Session: m.Focused().ID}}
	}},
	{"/revoke LABEL", "end a link of this session: what it opened closes", func(m *Model, arg string) []Cmd {
		if arg == "" || strings.Contains(arg, " ") {
			m.notify(true, "usage: /revoke LABEL (/links lists them)")
			return nil
		}
		return []Cmd{cmdRevoke{Session: m.Focused().ID, Label: arg}}
	}},
}

// offeredTo says, for the commands not every person may run, who may:
// the slash menu lists them only then, and slash refuses them otherwise.
var offeredTo = map[string]func(*Model) bool{
	"/invite": mayInvite,
	"/grant":  mayShare, "/ungrant": mayShare, "/grants": mayShare,
	"/link": mayShare, "/links": mayShare, "/revoke": mayShare,
	"/pin": mayPin, "/unpin": mayPin, // pins.go
	"/archive": mayShare, "/unarchive": mayShare, "/archived": mayList, // archive.go
}

// refusedWords says why a command offered to others only is refused
// to this person, for the commands that are not sharing's.
var refusedWords = map[string]string{
	"/pin":       "a shared session's viewer pins nothing",
	"/unpin":     "a shared session's viewer pins nothing",
	"/archive":   "only the session's creator or an admin may archive it",
	"/unarchive": "only the session's creator or an admin may bring it back",
}

// mayList: a person, not a link's viewer.
func mayList(m *Model) bool { return !m.ReadOnly }

// mayInvite: an admin (an owner token, or an admin member's).
func mayInvite(m *Model) bool { return !m.ReadOnly && m.Conn.Role == wire.TokenOwner }

// mayShare: the focused session's creator, or an admin (whose access is
// creator in every session).
func mayShare(m *Model) bool {
	s := m.Focused()
	return !m.ReadOnly && s != nil && s.Access == wire.AccessCreator
}

// offered says whether the menu may list c to this person, now.
func (m *Model) offered(c slashCommand) bool {
	may := offeredTo[c.name()]
	return may == nil || may(m)
}

// refuseOffer says who may run a command offered to others only, and
// returns true, when this person may not.
func (m *Model) refuseOffer(name string) bool {
	may := offeredTo[name]
	switch {
	case may == nil || may(m):
		return false
	case m.ReadOnly:
		m.notify(true, m.readOnlyWords())
	case name == "/invite":
		m.notify(true, "only an admin may invite people")
	case m.Focused() == nil && refusedWords[name] != "":
		m.notify(true, "no session: open the one to "+strings.TrimPrefix(name, "/"))
	case m.Focused() == nil:
		m.notify(true, "no session: open the one to share")
	case refusedWords[name] != "":
		m.notify(true, refusedWords[name])
	default:
		m.notify(true, "only the session's creator or an admin may share it or see who has it")
	}
	return true
}

// readAccess takes read or write, as a person types them.
func readAccess(word string) (wire.Access, bool) {
	switch a := wire.Access(strings.ToLower(word)); a {
	case wire.AccessRead, wire.AccessWrite:
		return a, true
	}
	return "", false
}

// memberName is a member's name as typed: an @ before it, from the
// habit of mentions, is taken off.
func memberName(word string) string { return strings.TrimPrefix(word, "@") }

// invite is /invite NAME [read|write].
func (m *Model) invite(arg string) []Cmd {
	f := strings.Fields(arg)
	if len(f) == 0 || len(f) > 2 {
		m.notify(true, "usage: /invite NAME [read|write]")
		return nil
	}
	cmd := cmdInvite{Name: memberName(f[0])}
	if len(f) == 2 {
		a, ok := readAccess(f[1])
		if !ok {
			m.notify(true, "usage: /invite NAME [read|write]: the access is read or write, not "+f[1])
			return nil
		}
		if !mayShare(m) {
			m.notify(true, "no session of yours to give: /invite "+cmd.Name+" alone adds them")
			return nil
		}
		cmd.Access, cmd.Session = a, m.Focused().ID
	}
	m.notify(false, "inviting "+cmd.Name+"…")
	return []Cmd{cmd}
}

// grant is /grant NAME read|write.
func (m *Model) grant(arg string) []Cmd {
	f := strings.Fields(arg)
	if len(f) != 2 {
		m.notify(true, "usage: /grant NAME read|write")
		return nil
	}
	a, ok := readAccess(f[1])
	if !ok {
		m.notify(true, "usage: /grant NAME read|write: the access is read or write, not "+f[1])
		return nil
	}
	return []Cmd{cmdGrant{Session: m.Focused().ID, Member: memberName(f[0]), Access: a}}
}

// ungrant is /ungrant NAME.
func (m *Model) ungrant(arg string) []Cmd {
	f := strings.Fields(arg)
	if len(f) != 1 {
		m.notify(true, "usage: /ungrant NAME")
		return nil
	}
	return []Cmd{cmdGrant{Session: m.Focused().ID, Member: memberName(f[0])}}
}

// link is /link [read|write]: read when none is said.
func (m *Model) link(arg string) []Cmd {
	a, ok := wire.AccessRead, true
	if arg = strings.TrimSpace(arg); arg != "" {
		a, ok = readAccess(arg)
	}
	if !ok {
		m.notify(true, "usage: /link [read|write]: read when none is said")
		return nil
	}
	m.notify(false, "making a link…")
	return []Cmd{cmdLink{Session: m.Focused().ID, Access: a}}
}

// shareResult takes the results of sharing; it says whether r was one.
func (m *Model) shareResult(r any) ([]Cmd, bool) {
	switch r := r.(type) {
	case resInvited:
		return m.invited(r), true
	case resGranted:
		m.granted(r)
	case resGrants:
		m.grantsListed(r)
	case resLinked:
		return m.linked(r), true
	case resLinks:
		m.linksListed(r)
	case resRevoked:
		m.revoked(r)
	default:
		return nil, false
	}
	return nil, true
}

func (m *Model) invited(r resInvited) []Cmd {
	if r.Err != nil {
		if client.Code(r.Err) == wire.CodeConflict {
			m.notify(true, fmt.Sprintf("a member named “%s” already exists: /grant %s read|write gives them this session", r.Member.Name, r.Member.Name))
		} else {
			m.notify(true, "invite: "+spoken(r.Err))
		}
		return nil
	}
	given := ""
	switch {
	case r.GrantErr != nil:
		given = ", but not given this session (" + grantWords(r.Member.Name, r.GrantErr) + ")"
	case r.Access == wire.AccessWrite:
		given = " and may write in this session"
	case r.Access == wire.AccessRead:
		given = " and may read this session"
	}
	m.notify(r.GrantErr != nil, fmt.Sprintf("“%s” added%s; their link, shown this once, is copied: %s", r.Member.Name, given, r.URL))
	return []Cmd{cmdCopy{Text: r.URL}}
}

// grantWords says why a grant was refused.
func grantWords(member string, err error) string {
	switch client.Code(err) {
	case wire.CodeNotFound:
		return "no member is named “" + member + "”"
	case wire.CodeConflict:
		return member + " made this session: their access is theirs"
	}
	return spoken(err)
}

func (m *Model) granted(r resGranted) {
	switch {
	case r.Err != nil && r.Access == "" && client.Code(r.Err) == wire.CodeNotFound:
		m.notify(true, r.Member+" has no access to this session to take back")
	case r.Err != nil:
		m.notify(true, grantWords(r.Member, r.Err))
	case r.Access == wire.AccessWrite:
		m.notify(false, r.Member+" may now read and write in this session")
	case r.Access == wire.AccessRead:
		m.notify(false, r.Member+" may now read this session")
	default:
		m.notify(false, r.Member+" no longer has access to this session")
	}
}

func (m *Model) grantsListed(r resGrants) {
	if r.Err != nil {
		m.notify(true, "grants: "+spoken(r.Err))
		return
	}
	var who []string
	for _, g := range r.List {
		who = append(who, g.Member+" "+string(g.Access))
	}
	switch len(who) {
	case 0:
		m.notify(false, "no member has this session: /grant NAME read|write gives it")
	case 1:
		m.notify(false, "only "+who[0]+" has this session: /grant NAME read|write gives it")
	default:
		m.notify(false, "access: "+strings.Join(who, " · "))
	}
}

func (m *Model) linked(r resLinked) []Cmd {
	if r.Err != nil {
		m.notify(true, "link: "+spoken(r.Err))
		return nil
	}
	what := "read link"
	if r.Link.Access == wire.AccessWrite {
		what = "write link (guests)"
	}
	m.notify(false, fmt.Sprintf("%s “%s” copied, shown this once: %s (/revoke %s ends it)", what, r.Link.Label, r.URL, r.Link.Label))
	return []Cmd{cmdCopy{Text: r.URL}}
}

func (m *Model) linksListed(r resLinks) {
	if r.Err != nil {
		m.notify(true, "links: "+spoken(r.Err))
		return
	}
	if len(r.List) == 0 {
		m.notify(false, "no links to this session: /link makes one, /link write one for guests")
		return
	}
	var ls []string
	for _, l := range r.List {
		s := l.Label + " " + string(l.Access)
		if l.ExpiresAt != "" {
			s += " until " + l.ExpiresAt
		}
		ls = append(ls, s)
	}
	m.notify(false, "links: "+strings.Join(ls, " · ")+" (/revoke LABEL ends one)")
}

func (m *Model) revoked(r resRevoked) {
	switch {
	case client.Code(r.Err) == wire.CodeNotFound:
		m.notify(true, "this session has no link labelled “"+r.Label+"” (/links lists them)")
	case r.Err != nil:
		m.notify(true, "revoke: "+spoken(r.Err))
	default:
		m.notify(false, "link “"+r.Label+"” revoked: what it opened closes")
	}
}

// shareRun runs the Cmds of sharing; it says whether cmd was one.
func (a *App) shareRun(cmd Cmd) bool {
	switch cmd := cmd.(type) {
	case cmdInvite:
		a.goRun(func() { a.post(a.inviteMember(cmd)) })
	case cmdGrant:
		a.goRun(func() {
			var err error
			if cmd.Access == "" {
				err = a.c.Ungrant(a.ctx, cmd.Session, cmd.Member)
			} else {
				err = a.c.Grant(a.ctx, cmd.Session, cmd.Member, cmd.Access)
			}
			a.post(resGranted{Member: cmd.Member, Access: cmd.Access, Err: err})
		})
	case cmdGrants:
		a.goRun(func() {
			gs, err := a.c.Grants(a.ctx, cmd.Session)
			a.post(resGrants{List: gs, Err: err})
		})
	case cmdLink:
		a.goRun(func() {
			l, err := a.c.ShareLink(a.ctx, cmd.Session, wire.LinkCreate{Access: cmd.Access})
			u := ""
			if err == nil {
				u = a.c.PageLink(l.Session, l.Token)
			}
			a.post(resLinked{Link: l, URL: u, Err: err})
		})
	case cmdLinks:
		a.goRun(func() {
			ls, err := a.c.Links(a.ctx, cmd.Session)
			a.post(resLinks{List: ls, Err: err})
		})
	case cmdRevoke:
		a.goRun(func() { a.post(resRevoked{Label: cmd.Label, Err: a.c.Unlink(a.ctx, cmd.Session, cmd.Label)}) })
	default:
		return false
	}
	return true
}

// inviteMember adds a member and gives them the session, if asked.
func (a *App) inviteMember(cmd cmdInvite) resInvited {
	mc, err := a.c.AddMember(a.ctx, cmd.Name, false)
	r := resInvited{Member: mc, URL: a.c.KeyedLink(mc.URL), Access: cmd.Access, Err: err}
	if err != nil {
		r.Member.Name = cmd.Name
		return r
	}
	if cmd.Session != "" {
		if r.GrantErr = a.c.Grant(a.ctx, cmd.Session, mc.Name, cmd.Access); r.GrantErr == nil {
			r.URL = a.c.PageLink(cmd.Session, mc.Token) // opens on the session given
		}
	}
	return r
}
