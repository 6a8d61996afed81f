package term

import (
	"fmt"
	"strings"

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
	cmdNewSession struct{}
	cmdRetry      struct{}
	cmdRedraw     struct{} // the terminal's whole screen again (Ctrl-L)
	cmdLoadOlder  struct {
		Session string
		Before  int64
	}
)

func (cmdSend) isCmd()       {}
func (cmdInterrupt) isCmd()  {}
func (cmdPatch) isCmd()      {}
func (cmdNewSession) isCmd() {}
func (cmdRetry) isCmd()      {}
func (cmdRedraw) isCmd()     {}
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
	{"/model NAME", "set the model", func(m *Model, arg string) []Cmd {
		if arg == "" {
			m.notify(true, "usage: /model NAME")
			return nil
		}
		return m.patchFocused(wire.SessionPatch{Model: &arg})
	}},
	{"/effort LEVEL", "set the effort (none clears)", func(m *Model, arg string) []Cmd {
		if arg == "" {
			m.notify(true, "usage: /effort LEVEL (or none)")
			return nil
		}
		if arg == "none" {
			arg = ""
		}
		return m.patchFocused(wire.SessionPatch{Effort: &arg})
	}},
	{"/title TEXT", "rename the session", func(m *Model, arg string) []Cmd {
		return m.patchFocused(wire.SessionPatch{Title: &arg})
	}},
	{"/help", "list the keys and commands", func(m *Model, _ string) []Cmd {
		m.ShowHelp = true
		return nil
	}},
}

// slash runs a /command typed in the composer.
func (m *Model) slash(line string) []Cmd {
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
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
