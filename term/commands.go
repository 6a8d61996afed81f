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

// helpText lists every key and command.
var helpText = []string{
	"albedo — keys",
	"",
	"Enter          send            Alt-Enter   new line",
	"Up (empty)     recall input    Tab         sidebar ⇄ composer",
	"Ctrl-N         new session     Alt-Up/Down switch session",
	"PgUp/PgDn      scroll          Home/End    top / follow",
	"Esc, Ctrl-C    interrupt turn  Ctrl-C ×2   quit (when idle)",
	"Ctrl-Q         quit            r           retry when unavailable",
	"",
	"/model NAME    set the model   /effort LEVEL   set effort (none clears)",
	"/title TEXT    rename          /help           this help",
	"",
	"any key closes this help",
}

// slash runs a /command typed in the composer.
func (m *Model) slash(line string) []Cmd {
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	arg = strings.TrimSpace(arg)
	s := m.Focused()
	needSession := func() bool {
		if s == nil {
			m.notify(true, "no session: Ctrl-N creates one")
			return false
		}
		return true
	}
	switch name {
	case "/help":
		m.ShowHelp = true
	case "/model":
		if arg == "" {
			m.notify(true, "usage: /model NAME")
			return nil
		}
		if needSession() {
			return []Cmd{cmdPatch{Session: s.ID, ETag: s.ETag, Patch: wire.SessionPatch{Model: &arg}}}
		}
	case "/effort":
		if arg == "" {
			m.notify(true, "usage: /effort LEVEL (or none)")
			return nil
		}
		if arg == "none" {
			arg = ""
		}
		if needSession() {
			return []Cmd{cmdPatch{Session: s.ID, ETag: s.ETag, Patch: wire.SessionPatch{Effort: &arg}}}
		}
	case "/title":
		if needSession() {
			return []Cmd{cmdPatch{Session: s.ID, ETag: s.ETag, Patch: wire.SessionPatch{Title: &arg}}}
		}
	default:
		m.notify(true, fmt.Sprintf("unknown command %s: /help lists them", name))
	}
	return nil
}
