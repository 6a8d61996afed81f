package term

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"

	"albedo/wire"
)

// Cmd is a side effect Update asks the App to run off the UI goroutine.
type Cmd interface{ isCmd() }

// The Cmds.
type (
	cmdSend      struct{ Session, Text string }
	cmdInterrupt struct{ Session string }
	cmdPatch     struct {
		Session, ETag string
		Patch         wire.SessionPatch
		Retried       bool
	}
	cmdNewSession struct {
		Provider string
		Then     string // an input to send in it once made: what was typed with no session open
	}
	cmdDelete    struct{ Session string }
	cmdRetry     struct{}
	cmdRedraw    struct{} // the terminal's whole screen again (Ctrl-L)
	cmdNotify    struct{ Title, Body string }
	cmdCopy      struct{ Text string } // to the clipboard, through the terminal
	cmdMouse     struct{ On bool }     // capture the mouse (wheel scrolls) or leave it to the terminal
	cmdLoadOlder struct {
		Session string
		Before  int64
	}
	cmdProviders struct{}                 // what /new may name: the daemon's providers and bots
	cmdTyped     struct{ Session string } // the draft changed: presence says so to the others
	cmdSearch    struct{ Query string }   // search every session (hits.go)
	cmdRead      struct {                 // the person has read session up to offset (read.go)
		Session string
		Offset  int64
	}
)

func (cmdRead) isCmd() {}

func (cmdSearch) isCmd() {}

func (cmdTyped) isCmd() {}

func (cmdSend) isCmd()       {}
func (cmdInterrupt) isCmd()  {}
func (cmdPatch) isCmd()      {}
func (cmdNewSession) isCmd() {}
func (cmdDelete) isCmd()     {}
func (cmdRetry) isCmd()      {}
func (cmdRedraw) isCmd()     {}
func (cmdNotify) isCmd()     {}
func (cmdCopy) isCmd()       {}
func (cmdMouse) isCmd()      {}
func (cmdLoadOlder) isCmd()  {}
func (cmdProviders) isCmd()  {}

// Results of Cmds, posted back into the loop.
type (
	resSessions struct {
		List []wire.Session
		Err  error
	}
	resCreated struct {
		Session wire.Session
		Then    string // cmdNewSession's
		Err     error
	}
	resPatched struct {
		Session wire.Session
		Err     error
	}
	resSent struct {
		Session string
		Text    string // what was sent, given back when it was refused
		Receipt wire.Receipt
		Err     error
	}
	resInterrupted struct {
		Session string
		Err     error
	}
	resDeleted struct {
		Session string
		Err     error
	}
	resOlder struct {
		Session string
		Page    wire.Page
		Err     error
	}
	resProviders struct {
		List wire.Providers
		Bots []string
		Err  error
	}
	resSearch struct {
		Query   string
		Results wire.SearchResults
		Err     error
	}
)

// slashCommand is one /command: how it is typed (its first word is its
// name), what it does in words, and what it runs with the rest of the line.
// The help overlay and docs/terminal.md list them with the keys. run is
// called only by Model.slash, on the UI goroutine.
type slashCommand struct {
	usage string
	does  string
	run   func(m *Model, arg string) []Cmd
}

// changesSessions names the slash commands that change sessions: a
// read-only view refuses them.
var changesSessions = map[string]bool{"/new": true, "/title": true, "/delete": true, "/model": true, "/effort": true, "/system": true, "/compact": true,
	"/allow": true, "/always": true, "/deny": true, "/attach": true,
	"/respond": true, "/participants": true, "/continue": true}

var slashCommands = []slashCommand{
	{"/new [PROVIDER]", "new session, with echo, a configured provider or bot:NAME", func(m *Model, arg string) []Cmd {
		m.notify(false, "creating a session…")
		return []Cmd{cmdNewSession{Provider: arg}}
	}},
	{"/providers", "list what /new may name: providers and bots", func(m *Model, _ string) []Cmd {
		return []Cmd{cmdProviders{}}
	}},
	{"/title TEXT", "rename the session (/rename TEXT too)", func(m *Model, arg string) []Cmd {
		if arg == "" {
			m.notify(true, "usage: /title TEXT")
			return nil
		}
		return m.patchFocused(wire.SessionPatch{Title: &arg})
	}},
	{"/delete", "delete the session, after you confirm", func(m *Model, _ string) []Cmd {
		s := m.Focused()
		if s == nil {
			m.notify(true, "no session to delete")
			return nil
		}
		id := s.ID
		m.ask("delete session "+s.name()+" and all its messages? y/n", func(m *Model) []Cmd {
			m.notify(false, "deleting…")
			return []Cmd{cmdDelete{Session: id}}
		})
		return nil
	}},
	modelCommand,
	{"/effort LEVEL", "set the effort: none…max, or default", func(m *Model, arg string) []Cmd {
		if arg == "default" {
			arg = ""
		} else if arg == "" || !wire.ValidEffort(arg) {
			m.notify(true, "usage: /effort "+strings.Join(wire.Efforts, "|")+"|default")
			return nil
		}
		return m.patchFocused(wire.SessionPatch{Effort: &arg})
	}},
	{"/system [TEXT]", "set the session's system text; none: its profile's", func(m *Model, arg string) []Cmd {
		return m.patchFocused(wire.SessionPatch{System: &arg})
	}},
	pinCommands[0], pinCommands[1],
	archiveCommands[0], archiveCommands[1], archiveCommands[2],
	participantCommands[0], participantCommands[1],
	attachCommand,
	continueCommand,
	{"/copy [code N]", "copy the last reply, or its code block N", (*Model).copyCommand},
	treeCommands[0], treeCommands[1], treeCommands[2],
	shareCommands[0], shareCommands[1], shareCommands[2], shareCommands[3],
	shareCommands[4], shareCommands[5], shareCommands[6],
	{"/allow", "allow the tool call waiting (Alt-Y)", func(m *Model, _ string) []Cmd { return m.allowCall() }},
	{"/always", "allow it, and its tool for the rest of the session (Alt-A)", func(m *Model, _ string) []Cmd { return m.allowCallSession() }},
	{"/deny [REASON]", "deny it, saying why if you like (Alt-N)", (*Model).denyCommand},
	{"/search TEXT", "search every session; Enter opens a hit", (*Model).searchAll},
	{"/mouse on|off", "off: the terminal selects text; on: the wheel scrolls", func(m *Model, arg string) []Cmd {
		if arg != "on" && arg != "off" {
			m.notify(true, "usage: /mouse on|off")
			return nil
		}
		m.notify(false, "mouse "+arg)
		return []Cmd{cmdMouse{On: arg == "on"}}
	}},
	{"/notify on|off", "bell and desktop notice when a turn ends or waits elsewhere", func(m *Model, arg string) []Cmd {
		switch arg {
		case "on", "off":
			m.Quiet = arg == "off"
			m.notify(false, "notifications "+arg)
		default:
			m.notify(true, "usage: /notify on|off")
		}
		return nil
	}},
	{"/help", "list the keys and commands", func(m *Model, _ string) []Cmd {
		m.ShowHelp = true
		return nil
	}},
}

// slash runs a /command typed in the composer.
func (m *Model) slash(line string) []Cmd {
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	if name == "/rename" {
		name = "/title" // what people try first
	}
	arg = strings.TrimSpace(arg)
	for _, c := range slashCommands {
		if cmdName, _, _ := strings.Cut(c.usage, " "); cmdName == name {
			if changesSessions[cmdName] && m.refuseChange(cmdName) || m.refuseOffer(cmdName) {
				return nil
			}
			return c.run(m, arg)
		}
	}
	// Never sent as text: kept in the composer, to be corrected.
	m.setComposer(strings.TrimSpace(line))
	m.notify(true, fmt.Sprintf("unknown command %s: /help lists them; to send a line that starts with /, begin it with //", name))
	return nil
}

// commandNamed says whether name is a slash command's.
func commandNamed(name string) bool {
	return slices.ContainsFunc(slashCommands, func(c slashCommand) bool { return c.name() == name })
}

// patchFocused changes the focused session's settings.
func (m *Model) patchFocused(p wire.SessionPatch) []Cmd {
	s := m.Focused()
	if s == nil {
		m.notify(true, "no session: Ctrl-N creates one")
		return nil
	}
	return []Cmd{cmdPatch{Session: s.ID, ETag: s.ETag, Patch: p}}
}

// question is a yes/no question in the status bar: y runs yes, any other
// key drops it.
type question struct {
	prompt string
	yes    func(*Model) []Cmd
}

func (m *Model) ask(prompt string, yes func(*Model) []Cmd) {
	m.asking = &question{prompt, yes}
}

// answer is the key pressed while a question is asked. Alt-Y is not y:
// it allows a tool call, and must not delete a session asked about.
func (m *Model) answer(ev *tcell.EventKey) []Cmd {
	q := m.asking
	m.asking = nil
	if ev.Key() == tcell.KeyRune && (ev.Rune() == 'y' || ev.Rune() == 'Y') && ev.Modifiers()&tcell.ModAlt == 0 {
		return q.yes(m)
	}
	m.notify(false, "not done")
	return nil
}

// copyCommand is /copy: the focused session's last reply, or with "code N"
// the Nth code block of the newest reply that has one (as numbered in its
// gutter; "code" alone is its last).
func (m *Model) copyCommand(arg string) []Cmd {
	s := m.Focused()
	if s == nil {
		m.notify(true, "no session")
		return nil
	}
	if arg == "" {
		reply := s.lastReply()
		if reply == "" {
			m.notify(true, "no reply to copy yet")
			return nil
		}
		return m.copyText(reply, "the last reply")
	}
	word, num, _ := strings.Cut(arg, " ")
	if word != "code" {
		m.notify(true, "usage: /copy [code N]")
		return nil
	}
	for i := len(s.Events) - 1; i >= 0; i-- {
		ev := s.Events[i]
		if ev.Type != wire.EventMessage || ev.Role == wire.RoleUser {
			continue
		}
		codes := codeBlocks(ev.Text)
		if len(codes) == 0 {
			continue
		}
		n := len(codes)
		if num != "" {
			var err error
			if n, err = strconv.Atoi(strings.TrimSpace(num)); err != nil || n < 1 || n > len(codes) {
				m.notify(true, fmt.Sprintf("the last reply with code has code 1 to %d", len(codes)))
				return nil
			}
		}
		return m.copyText(codes[n-1], fmt.Sprintf("code %d", n))
	}
	m.notify(true, "no reply with a code block yet")
	return nil
}

// refuseReadOnly says so, and returns true, in a read-only view (a
// viewer's link): it makes no session either.
func (m *Model) refuseReadOnly() bool {
	if m.ReadOnly {
		m.notify(true, m.readOnlyWords())
	}
	return m.ReadOnly
}

// readOnlyHere says whether nothing may be sent or changed in the
// focused session: a viewer's link, or a member's read access to it.
func (m *Model) readOnlyHere() bool {
	s := m.Focused()
	return m.ReadOnly || s != nil && s.Access == wire.AccessRead
}

// readOnlyWords says why nothing is sent, in the composer's place and
// in a refusal.
func (m *Model) readOnlyWords() string {
	if m.ReadOnly {
		return "read-only: this view of a shared session cannot send or change anything"
	}
	return "read-only: you may read this session, not write in it"
}

// refuseHere says so, and returns true, when the focused session is
// read-only to this person.
func (m *Model) refuseHere() bool {
	if m.readOnlyHere() {
		m.notify(true, m.readOnlyWords())
		return true
	}
	return false
}

// refuseChange refuses a command that changes sessions where it may not
// run: /new in a viewer's link, the others in a read-only session (a
// member with read access makes sessions of their own).
func (m *Model) refuseChange(name string) bool {
	if name == "/new" {
		return m.refuseReadOnly()
	}
	return m.refuseHere()
}
