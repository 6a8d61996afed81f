package term

import (
	"fmt"
	"slices"

	"albedo/wire"
)

// Archived sessions (docs/protocol.md, "Pinned and archived sessions"):
// the session's creator or an admin archives it (/archive), and it
// leaves the sidebar at once, here and, through the feed, on every
// terminal that shows it. /archived lists the archived sessions this
// person may see (the list of sessions, those archived alone); Enter
// opens one, which stays in the sidebar while it is open elsewhere in
// the feed's eyes, and /unarchive brings it back for good.

// The Cmds and results of archiving.
type (
	cmdArchive struct {
		Session, Name, ETag string // Name: what the notice calls it, should the session be gone by the reply
		Archived            bool   // false: bring it back
	}
	cmdArchivedList struct{}
	resArchived     struct {
		Session  string
		Name     string
		Archived bool
		View     wire.Session
		Err      error
	}
	resArchivedList struct {
		List []wire.Session
		Err  error
	}
)

func (cmdArchive) isCmd()      {}
func (cmdArchivedList) isCmd() {}

// archiveCommands are /archive, /unarchive and /archived.
var archiveCommands = []slashCommand{
	{"/archive", "take the session out of the sidebar; /archived lists it", func(m *Model, _ string) []Cmd {
		return m.archiveFocused(true)
	}},
	{"/unarchive", "bring the archived session back to the sidebar", func(m *Model, _ string) []Cmd {
		return m.archiveFocused(false)
	}},
	{"/archived", "the archived sessions: Enter opens one", func(m *Model, _ string) []Cmd {
		m.hits = &hits{query: "archived sessions", loading: true, archived: []wire.Session{}}
		return []Cmd{cmdArchivedList{}}
	}},
}

// archiveFocused archives the focused session, or brings it back.
func (m *Model) archiveFocused(archive bool) []Cmd {
	s := m.Focused()
	switch {
	case archive && s.Archived:
		m.notify(false, "“"+s.name()+"” is archived already: /unarchive brings it back")
		return nil
	case !archive && !s.Archived:
		m.notify(false, "“"+s.name()+"” is not archived")
		return nil
	}
	s.archiving = archive
	return []Cmd{cmdArchive{Session: s.ID, Name: s.name(), ETag: s.ETag, Archived: archive}}
}

// archiveDone takes an archive's result: an archived session leaves the
// sidebar (what was written in it is kept for Up); one brought back
// stays, as the feed has it again.
func (m *Model) archiveDone(r resArchived) {
	s := m.session(r.Session)
	name := r.Name
	if s != nil {
		name, s.archiving = s.name(), false
	}
	if r.Err != nil {
		m.notify(true, "“"+name+"” not changed: "+spoken(r.Err))
		return
	}
	if !r.Archived {
		if s != nil {
			s.Archived, s.ETag = false, r.View.ETag
		}
		m.notify(false, "“"+name+"” is back in the sidebar")
		return
	}
	kept := s != nil && m.remove(s)
	msg := "“" + name + "” archived: /archived lists it"
	if kept {
		msg += "; what you wrote there is kept: Up in an empty composer recalls it"
	}
	m.notify(false, msg)
}

// archivedElsewhere takes out of the sidebar a session the feed says was
// archived, unless it was opened from /archived (it is known archived);
// in front of the person, the status bar says so.
func (m *Model) archivedElsewhere(s *SessionView) {
	if s == nil || s.Archived || s.archiving {
		return // archiving: this terminal's own act, which its reply reports
	}
	focused := s == m.Focused()
	kept := m.remove(s)
	if !focused && !kept {
		return
	}
	msg := "session “" + s.name() + "” was archived: /archived lists it"
	if kept {
		msg += "; what you wrote there is kept: Up in an empty composer recalls it"
	}
	m.notify(false, msg)
}

// archivedListed shows the archived sessions in the box of results.
func (m *Model) archivedListed(r resArchivedList) {
	h := m.hits
	if h == nil || !h.loading || h.archived == nil {
		return
	}
	if r.Err != nil {
		m.hits = nil
		m.notify(true, "archived sessions: "+spoken(r.Err))
		return
	}
	for _, s := range r.List {
		if !s.Archived {
			continue
		}
		h.archived = append(h.archived, s)
		h.results = append(h.results, wire.SearchResult{Session: s.ID, Title: s.Title, Type: wire.EventMessage,
			Author: "archived", Text: fmt.Sprintf("%d events", s.Head), At: s.UpdatedAt})
	}
	h.loading = false
	if len(h.results) == 0 {
		m.hits = nil
		m.notify(false, "no archived session")
	}
}

// openArchived puts an archived session in the sidebar and in front.
func (m *Model) openArchived(ws wire.Session) []Cmd {
	s := m.session(ws.ID)
	if s == nil {
		s = newSessionView(ws)
		m.Sessions = append(m.Sessions, s)
		m.resort()
	}
	s.Archived = true
	m.setFocus(slices.Index(m.Sessions, s))
	m.Pane = paneComposer
	m.notify(false, "“"+s.name()+"” is archived: /unarchive brings it back")
	return nil
}

// archiveResult takes the results of pins and archives; it says whether
// r was one.
func (m *Model) archiveResult(r any) bool {
	switch r := r.(type) {
	case resPinned:
		m.pinned(r)
	case resArchived:
		m.archiveDone(r)
	case resArchivedList:
		m.archivedListed(r)
	default:
		return false
	}
	return true
}

// archiveRun runs the Cmds of pins and archives; it says whether cmd was
// one.
func (a *App) archiveRun(cmd Cmd) bool {
	switch cmd := cmd.(type) {
	case cmdPin:
		a.goRun(func() {
			err := a.c.Pin(a.ctx, cmd.Session, cmd.Pin)
			a.post(resPinned{Session: cmd.Session, Pin: cmd.Pin, Err: err})
		})
	case cmdArchive:
		a.goRun(func() {
			v := cmd.Archived
			r := a.patch(cmdPatch{Session: cmd.Session, ETag: cmd.ETag, Patch: wire.SessionPatch{Archived: &v}})
			a.post(resArchived{Session: cmd.Session, Name: cmd.Name, Archived: v, View: r.Session, Err: r.Err})
		})
	case cmdArchivedList:
		a.goRun(func() {
			list, err := a.c.ArchivedSessions(a.ctx)
			a.post(resArchivedList{List: list, Err: err})
		})
	default:
		return false
	}
	return true
}
