package term

import (
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"

	"albedo/api/wire"
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
	cmdNewSession struct{ Provider string }
	cmdDelete     struct{ Session string }
	cmdRetry      struct{}
	cmdRedraw     struct{} // the terminal's whole screen again (Ctrl-L)
	cmdNotify     struct{ Title, Body string }
	cmdLoadOlder  struct {
		Session string
		Before  int64
	}
)

func (cmdSend) isCmd()       {}
func (cmdInterrupt) isCmd()  {}
func (cmdPatch) isCmd()      {}
func (cmdNewSession) isCmd() {}
func (cmdDelete) isCmd()     {}
func (cmdRetry) isCmd()      {}
func (cmdRedraw) isCmd()     {}
func (cmdNotify) isCmd()     {}
func (cmdLoadOlder) isCmd()  {}

// Results of Cmds, posted back into the loop.
type (
	resSessions struct {
		List []wire.Session
		Err  error
	}
	resCreated struct {
		Session wire.Session
		Err     error
	}
	resPatched struct {
		Session wire.Session
		Err     error
	}
	resSent struct {
		Session string
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
)

// slashCommand is one /command: how it is typed (its first word is its
// name), what it does in words, and what it runs with the rest of the line.
// The help overlay and the README list them with the keys. run is called
// only by Model.slash, on the UI goroutine.
type slashCommand struct {
	usage string
	does  string
	run   func(m *Model, arg string) []Cmd
}

var slashCommands = []slashCommand{
	{"/new [PROVIDER]", "new session, with echo, a configured provider or bot:NAME", func(m *Model, arg string) []Cmd {
		m.notify(false, "creating a session…")
		return []Cmd{cmdNewSession{Provider: arg}}
	}},
	{"/title TEXT", "rename the session", func(m *Model, arg string) []Cmd {
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
	{"/model NAME", "set the model", func(m *Model, arg string) []Cmd {
		if arg == "" {
			m.notify(true, "usage: /model NAME")
			return nil
		}
		return m.patchFocused(wire.SessionPatch{Model: &arg})
	}},
	{"/effort LEVEL", "set the effort: none…max, or default", func(m *Model, arg string) []Cmd {
		if arg == "default" {
			arg = ""
		} else if arg == "" || !wire.ValidEffort(arg) {
			m.notify(true, "usage: /effort "+strings.Join(wire.Efforts, "|")+"|default")
			return nil
		}
		return m.patchFocused(wire.SessionPatch{Effort: &arg})
	}},
	{"/notify on|off", "bell and desktop notice when a turn ends elsewhere", func(m *Model, arg string) []Cmd {
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
			return c.run(m, arg)
		}
	}
	m.notify(true, fmt.Sprintf("unknown command %s: /help lists them", name))
	return nil
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

// answer is the key pressed while a question is asked.
func (m *Model) answer(ev *tcell.EventKey) []Cmd {
	q := m.asking
	m.asking = nil
	if ev.Key() == tcell.KeyRune && (ev.Rune() == 'y' || ev.Rune() == 'Y') {
		return q.yes(m)
	}
	m.notify(false, "not done")
	return nil
}
