package term

import (
	"fmt"
	"slices"

	"albedo/wire"
)

// Forks and compaction in the terminal. On a selected message (Ctrl-Y):
// f forks the session there, r regenerates (a fork whose turn runs the
// message's input again), e edits (a fork just before a user's message,
// its text in the composer to change and send). /forks lists the forks
// of the session, its parent and the siblings at its fork point in a box
// to open one; /parent opens the parent at the fork point; /compact
// compacts the session by hand. The status bar shows where a fork came
// from, and the sidebar lists each fork under its parent (sidebar.go).

// The Cmds and results of forks and compaction.
type (
	cmdFork struct {
		Parent string
		Req    wire.ForkRequest
		Draft  string // the composer's text in the fork (an edit)
	}
	cmdForks   struct{ Session string }
	cmdCompact struct{ Session string }

	resForked struct {
		Parent string
		Fork   wire.Session
		Draft  string
		Err    error
	}
	resForks struct {
		Session string
		Results []wire.SearchResult
		Err     error
	}
	resCompacted struct {
		Event wire.Event
		Err   error
	}
)

func (cmdFork) isCmd()    {}
func (cmdForks) isCmd()   {}
func (cmdCompact) isCmd() {}

// forkPick is a key on a selected message that forks: f, r or e. It says
// whether the key was one.
func (m *Model) forkPick(s *SessionView, ch rune) ([]Cmd, bool) {
	if ch != 'f' && ch != 'r' && ch != 'e' {
		return nil, false
	}
	if m.refuseReadOnly() {
		return nil, true
	}
	ev := s.Events[m.pick.event]
	m.pick = nil
	switch ch {
	case 'f':
		m.notify(false, "forking…")
		return []Cmd{cmdFork{Parent: s.ID, Req: wire.ForkRequest{At: s.wholeTurn(ev)}}}, true
	case 'r':
		if ev.InputID == "" || (ev.Role != wire.RoleUser && ev.Role != wire.RoleAssistant) {
			m.notify(true, "regenerate needs a user's message or a reply")
			return nil, true
		}
		m.notify(false, "regenerating in a fork…")
		return []Cmd{cmdFork{Parent: s.ID, Req: wire.ForkRequest{At: ev.Offset, Rerun: true}}}, true
	default:
		if ev.Role != wire.RoleUser {
			m.notify(true, "edit needs a user's message")
			return nil, true
		}
		m.notify(false, "forking to edit…")
		return []Cmd{cmdFork{Parent: s.ID, Req: wire.ForkRequest{At: ev.Offset - 1}, Draft: ev.Text}}, true
	}
}

// wholeTurn is where a fork at ev goes: at a reply or a tool call, the
// close of its turn when that follows it, so that the fork holds the turn
// whole (a call with its result).
func (s *SessionView) wholeTurn(ev wire.Event) int64 {
	if ev.Role != wire.RoleAssistant && ev.Type != wire.EventToolCall || ev.TurnID == "" {
		return ev.Offset
	}
	for _, e := range s.Events {
		if e.Offset > ev.Offset && e.Type == wire.EventTurn && e.TurnID == ev.TurnID && e.State != wire.TurnStarted {
			return e.Offset
		}
	}
	return ev.Offset
}

// forked focuses a fork made here; an edit's text goes to its composer.
func (m *Model) forked(r resForked) {
	if r.Err != nil {
		m.notify(true, "fork: "+spoken(r.Err))
		return
	}
	s := m.session(r.Fork.ID)
	if s == nil {
		s = newSessionView(r.Fork)
		m.Sessions = append(m.Sessions, s)
		m.resort()
	}
	m.setFocus(slices.Index(m.Sessions, s))
	m.Pane = paneComposer
	if r.Draft != "" {
		m.setComposer(r.Draft)
	}
	m.notify(false, fmt.Sprintf("a fork of %s at #%d: the original is as it was", m.nameOf(r.Parent), r.Fork.Parent.Offset))
}

// nameOf is a session's name as the sidebar shows it, or its short id.
func (m *Model) nameOf(id string) string {
	if s := m.session(id); s != nil {
		return s.name()
	}
	return (&SessionView{ID: id}).name()
}

// forkMark marks a fork in the sidebar, before its name.
const forkMark = "⑂"

// sidebarName is a session's name as the sidebar shows it, and for a
// fork where it came from: "⑂ NAME" and " ← PARENT" (the parent's name
// when the sidebar holds it, else nothing: an id says little).
func (m *Model) sidebarName(s *SessionView) (name, from string) {
	if s.Parent == nil {
		return s.name(), ""
	}
	if p := m.session(s.Parent.Session); p != nil {
		from = " ← " + p.name()
	}
	return forkMark + " " + s.name(), from
}

// forkOrigin is the status bar's word on where a fork came from.
func (m *Model) forkOrigin(s *SessionView) string {
	if s.Parent == nil {
		return ""
	}
	return fmt.Sprintf("← %s #%d (/parent)", m.nameOf(s.Parent.Session), s.Parent.Offset)
}

// treeCommands are the slash commands of forks and compaction.
var treeCommands = []slashCommand{
	{"/forks", "the session's forks, parent and siblings: Enter opens", func(m *Model, _ string) []Cmd {
		s := m.Focused()
		if s == nil {
			m.notify(true, "no session")
			return nil
		}
		m.hits = &hits{query: "forks of " + s.name(), loading: true}
		return []Cmd{cmdForks{Session: s.ID}}
	}},
	{"/parent", "open the session this fork came from, at the fork", func(m *Model, _ string) []Cmd {
		s := m.Focused()
		if s == nil || s.Parent == nil {
			m.notify(true, "this session is no fork")
			return nil
		}
		return m.open(wire.SearchResult{Session: s.Parent.Session, Offset: s.Parent.Offset})
	}},
	{"/compact", "summarize old messages for the model; all stay here", func(m *Model, _ string) []Cmd {
		s := m.Focused()
		if s == nil {
			m.notify(true, "no session")
			return nil
		}
		m.notify(false, "compacting…")
		return []Cmd{cmdCompact{Session: s.ID}}
	}},
}

// forksListed shows the tree around a session in the box of results.
func (m *Model) forksListed(r resForks) {
	h := m.hits
	if h == nil || !h.loading {
		return
	}
	if r.Err != nil {
		m.hits = nil
		m.notify(true, "forks: "+spoken(r.Err))
		return
	}
	h.results, h.loading = r.Results, false
	if len(h.results) == 0 {
		m.hits = nil
		m.notify(false, "no forks, and no parent: /fork from a message with Ctrl-Y, then f")
	}
}

// compacted says what a compaction by hand covered.
func (m *Model) compacted(r resCompacted) {
	if r.Err != nil {
		m.notify(true, "compact: "+spoken(r.Err))
		return
	}
	m.notify(false, fmt.Sprintf("compacted messages #%d–#%d into a summary", r.Event.From, r.Event.To))
}

// treeResult takes the results of forks and compaction; it says whether
// r was one.
func (m *Model) treeResult(r any) bool {
	switch r := r.(type) {
	case resForked:
		m.forked(r)
	case resForks:
		m.forksListed(r)
	case resCompacted:
		m.compacted(r)
	case resInfo:
		m.info(r)
	default:
		return false
	}
	return true
}

// treeRun runs the Cmds of forks and compaction; it says whether cmd was
// one.
func (a *App) treeRun(cmd Cmd) bool {
	switch cmd := cmd.(type) {
	case cmdFork:
		a.goRun(func() {
			f, err := a.c.Fork(a.ctx, cmd.Parent, cmd.Req)
			a.post(resForked{Parent: cmd.Parent, Fork: f, Draft: cmd.Draft, Err: err})
		})
	case cmdForks:
		a.goRun(func() { a.post(a.tree(cmd.Session)) })
	case cmdInfo:
		a.goRun(func() {
			s, err := a.c.Session(a.ctx, cmd.Session)
			a.post(resInfo{Session: s, Err: err})
		})
	case cmdCompact:
		a.goRun(func() {
			ev, err := a.c.Compact(a.ctx, cmd.Session)
			a.post(resCompacted{Event: ev, Err: err})
		})
	default:
		return false
	}
	return true
}

// tree lists, as results to open: the session's parent at the fork point
// and its siblings there (the parent's other forks at that point), then
// the session's own forks, each at its fork point.
func (a *App) tree(id string) resForks {
	r := resForks{Session: id}
	s, err := a.c.Session(a.ctx, id)
	if err != nil {
		r.Err = err
		return r
	}
	item := func(f wire.Session, at int64, what string) wire.SearchResult {
		return wire.SearchResult{Session: f.ID, Title: f.Title, Offset: at, Type: wire.EventMessage,
			Author: what, Text: fmt.Sprintf("%d events", f.Head), At: f.UpdatedAt}
	}
	if p := s.Parent; p != nil {
		if parent, err := a.c.Session(a.ctx, p.Session); err == nil {
			r.Results = append(r.Results, item(parent, p.Offset, fmt.Sprintf("parent, at #%d", p.Offset)))
		}
		if sibs, err := a.c.Forks(a.ctx, p.Session); err == nil {
			for _, f := range sibs {
				if f.ID != id && f.Parent.Offset == p.Offset {
					r.Results = append(r.Results, item(f, p.Offset, "sibling"))
				}
			}
		}
	}
	forks, err := a.c.Forks(a.ctx, id)
	if err != nil {
		r.Err = err
		return r
	}
	for _, f := range forks {
		r.Results = append(r.Results, item(f, f.Parent.Offset, fmt.Sprintf("fork at #%d", f.Parent.Offset)))
	}
	return r
}
