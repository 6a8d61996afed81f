package term

import "fmt"

// The actions the key table (keys.go) binds to keys. Each runs on the UI
// goroutine, like every Model method, and returns the Cmds it asks for.

func (m *Model) newLine() []Cmd {
	m.insert('\n')
	return nil
}

// recallEarlier steps back through the inputs sent, from an empty composer
// or while already recalling, so Up never replaces a draft.
func (m *Model) recallEarlier() []Cmd {
	if (len(m.Composer) == 0 || m.recall < len(m.Sent)) && m.recall > 0 {
		m.recall--
		m.setComposer(m.Sent[m.recall])
	}
	return nil
}

// recallLater steps forward again; past the last input the composer is
// empty.
func (m *Model) recallLater() []Cmd {
	if m.recall < len(m.Sent) {
		m.recall++
		if m.recall == len(m.Sent) {
			m.setComposer("")
		} else {
			m.setComposer(m.Sent[m.recall])
		}
	}
	return nil
}

func (m *Model) prevSession() []Cmd {
	m.moveFocus(-1)
	return nil
}

func (m *Model) nextSession() []Cmd {
	m.moveFocus(1)
	return nil
}

func (m *Model) switchPane() []Cmd {
	if m.Pane == paneComposer {
		m.Pane = paneSidebar
	} else {
		m.Pane = paneComposer
	}
	return nil
}

// toggleSidebar hides a shown sidebar and shows a hidden one, for good:
// a later resize keeps the choice. Hidden, it takes the keys' focus back
// to the composer.
func (m *Model) toggleSidebar() []Cmd {
	if m.Width < minSidebarWidth {
		m.notify(false, fmt.Sprintf("the sidebar needs %d columns", minSidebarWidth))
		return nil
	}
	if m.sidebarShown() {
		m.sidebar, m.Pane = sidebarOff, paneComposer
	} else {
		m.sidebar = sidebarOn
	}
	return nil
}

func (m *Model) newSession() []Cmd {
	if m.refuseReadOnly() {
		return nil
	}
	m.notify(false, "creating a session…")
	return []Cmd{cmdNewSession{}}
}

// pageUp keeps one line of the previous view in sight, and asks for older
// history once it reaches the top.
func (m *Model) pageUp() []Cmd {
	m.scroll(-(m.transcriptHeight() - 1))
	return m.maybeLoadOlder()
}

func (m *Model) pageDown() []Cmd {
	m.scroll(m.transcriptHeight() - 1)
	return nil
}

func (m *Model) toTop() []Cmd {
	if s := m.Focused(); s != nil {
		s.Follow, s.Top = false, 0
	}
	return m.maybeLoadOlder()
}

func (m *Model) toEnd() []Cmd {
	if s := m.Focused(); s != nil {
		s.Follow = true
	}
	return nil
}

// interrupting is the notice while an interrupt is on its way.
const interrupting = "interrupting…"

// interrupt stops the focused session's running turn; the key table binds
// it only while one runs.
func (m *Model) interrupt() []Cmd {
	m.notify(false, interrupting)
	return []Cmd{cmdInterrupt{Session: m.Focused().ID}}
}

func (m *Model) clearNotice() []Cmd {
	m.notify(false, "")
	return nil
}

func (m *Model) quit() []Cmd {
	m.Quit = true
	return nil
}

// quitOnSecond quits on the second Ctrl-C in a row and only asks on the
// first, so a Ctrl-C meant for a turn that just ended does not quit. Key
// disarms on every other press.
func (m *Model) quitOnSecond() []Cmd {
	if m.quitArmed {
		m.Quit = true
		return nil
	}
	m.quitArmed = true // the status bar asks while it is armed
	return nil
}

func (m *Model) retry() []Cmd {
	m.notifyConn("retrying…")
	return []Cmd{cmdRetry{}}
}
