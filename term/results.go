package term

import (
	"slices"
	"strings"

	"albedo/client"
	"albedo/wire"
)

// Result applies the result of a Cmd; none asks for another.
func (m *Model) Result(r any) []Cmd {
	switch r := r.(type) {
	case resSessions:
		m.listed(r)
	case resCreated:
		return m.created(r)
	case resPatched:
		m.patched(r)
	case resSent:
		m.sent(r)
	case resDeleted:
		m.deleted(r)
	case resInterrupted:
		if r.Err != nil {
			m.notify(true, "interrupt: "+spoken(r.Err))
		} else if m.Notice == interrupting {
			m.notify(false, "") // not what the turn's end said meanwhile (continue.go)
		}
	case resOlder:
		return m.older(r)
	case resProviders:
		m.providers(r)
	case resSearch:
		m.found(r)
	case resModels:
		m.modelsRead(r)
	default:
		if cmds, ok := m.shareResult(r); ok {
			return cmds
		}
		if cmds, ok := m.versionsResult(r); ok {
			return cmds
		}
		if !m.treeResult(r) && !m.fileResult(r) && !m.archiveResult(r) && !m.continueResult(r) {
			m.toolResult(r)
		}
	}
	return nil
}

// sent says why a message was not sent, and gives its text back: to the
// composer when it is empty and the message's session is in front,
// else to the inputs Up recalls. Nothing typed is lost.
func (m *Model) sent(r resSent) {
	if r.Err == nil {
		return
	}
	back := "Up in an empty composer recalls it"
	if s := m.Focused(); s != nil && s.ID == r.Session && len(m.Composer) == 0 {
		m.setComposer(r.Text)
		back = "it is back in the composer"
	} else if n := len(m.Sent); n == 0 || m.Sent[n-1] != r.Text {
		m.Sent = append(m.Sent, r.Text)
		m.recall = len(m.Sent)
	}
	m.notify(true, "not sent: "+spoken(r.Err)+"; "+back)
}

// listed merges the daemon's list of sessions into the sidebar.
func (m *Model) listed(r resSessions) {
	if r.Err != nil {
		m.notify(true, "list sessions: "+spoken(r.Err))
		return
	}
	for _, ws := range r.List {
		if s := m.session(ws.ID); s != nil {
			s.Title, s.Access = ws.Title, ws.Access
			continue
		}
		m.Sessions = append(m.Sessions, newSessionView(ws))
	}
	m.resort()
	if m.Focus < 0 && len(m.Sessions) > 0 {
		m.setFocus(0)
	}
}

// created focuses a session made here, composer ready, and sends in it
// what was typed while none was open; a session that could not be made
// gives that text back to the composer.
func (m *Model) created(r resCreated) []Cmd {
	if r.Err != nil {
		m.notify(true, "new session: "+spoken(r.Err))
		if r.Then != "" && len(m.Composer) == 0 {
			m.setComposer(r.Then)
		}
		return nil
	}
	m.notify(false, "")
	s := m.session(r.Session.ID)
	if s == nil {
		s = newSessionView(r.Session)
		m.Sessions = append(m.Sessions, s)
		m.resort()
	}
	m.setFocus(slices.Index(m.Sessions, s))
	m.Pane = paneComposer
	if r.Then == "" {
		return nil
	}
	s.Follow = true
	return []Cmd{cmdSend{Session: s.ID, Text: r.Then}}
}

func (m *Model) patched(r resPatched) {
	if r.Err != nil {
		m.notify(true, "not changed: "+spoken(r.Err))
		return
	}
	if s := m.session(r.Session.ID); s != nil {
		s.Title, s.Model, s.Effort, s.ETag = r.Session.Title, r.Session.Model, r.Session.Effort, r.Session.ETag
		s.takeSettings(r.Session)
	}
	m.notify(false, "settings saved")
}

// deleted takes a session deleted here out of the sidebar (one already
// gone, not_found, too).
func (m *Model) deleted(r resDeleted) {
	if r.Err != nil && client.Code(r.Err) != wire.CodeNotFound {
		m.notify(true, "delete: "+spoken(r.Err))
		return
	}
	if s := m.session(r.Session); s != nil {
		m.remove(s)
		m.notify(false, "session "+s.name()+" deleted")
	}
}

// older puts a page of history before what is loaded, when it joins it,
// keeping the same lines in view, and goes on with a search that asked
// for it.
func (m *Model) older(r resOlder) []Cmd {
	s := m.session(r.Session)
	if r.Err != nil {
		m.notify(true, "history: "+spoken(r.Err))
	}
	if r.Err != nil || s == nil || len(s.Events) == 0 || len(r.Page.Events) == 0 || r.Page.Events[len(r.Page.Events)-1].Offset != s.Events[0].Offset-1 {
		if f := m.search; f != nil && s == m.Focused() {
			f.loading = false
		}
		if j := m.jump; j != nil && s != nil && j.session == s.ID {
			m.jump = nil // the page did not join what is loaded
		}
		return nil
	}
	before := s.lineCount(m.look())
	s.Events = append(append([]wire.Event(nil), r.Page.Events...), s.Events...)
	s.More = r.Page.More
	s.calls.rebuild(s.Events)
	s.rerender()
	added := s.lineCount(m.look()) - before
	s.Top += added
	if j := m.jump; j != nil && j.session == s.ID {
		return m.land()
	}
	return m.searchMoved(s, added)
}

// providers says what /new may name: each provider (its default model,
// and which is the default), then each bot as bot:NAME.
func (m *Model) providers(r resProviders) {
	if r.Err != nil {
		m.notify(true, "providers: "+spoken(r.Err))
		return
	}
	var names []string
	for _, p := range r.List.Providers {
		n := p.Name
		if p.Model != "" {
			n += " (" + p.Model + ")"
		}
		if p.Name == r.List.Default {
			n += " default"
		}
		names = append(names, n)
	}
	for _, b := range r.Bots {
		names = append(names, "bot:"+b)
	}
	m.notify(false, "/new NAME: "+strings.Join(names, " · "))
}
