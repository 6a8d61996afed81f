package term

import (
	"os"
	"strings"

	"albedo/wire"
)

// Notifications: when a turn finishes or fails in a session the user is
// not looking at (another session has the focus, or the terminal window
// has lost it), or a tool call there waits for their decision
// (tools.go), the terminal rings its bell and, where it supports them,
// shows a desktop notification through OSC 9 (iTerm2, WezTerm, kitty,
// Windows Terminal) and OSC 777 (foot, Ghostty, rxvt-unicode, VTE);
// terminals ignore the one they do not know. /notify turns both off.

// turnEnded returns the notification for a turn that closed in s, if the
// user should hear of it: only live turns (not history a reset brings),
// only completed and failed ones (an interrupt is the user's own doing or
// the daemon's restart, which the status bar shows), and only when s is
// not in front of them.
func (m *Model) turnEnded(s *SessionView, ev wire.Event) []Cmd {
	if !s.news(ev) || m.Quiet || m.Focused() == s && m.TermFocused {
		return nil
	}
	switch ev.State {
	case wire.TurnCompleted:
		return []Cmd{cmdNotify{Title: "albedo: " + s.name(), Body: "reply ready"}}
	case wire.TurnFailed:
		return []Cmd{cmdNotify{Title: "albedo: " + s.name(), Body: "turn failed: " + ev.Error}}
	}
	return nil
}

// notification is the escape sequences that ask the terminal for a desktop
// notification. Title and body come from session titles and daemon errors,
// so they are cleaned first: no control character (which could end the
// sequence and inject another), no ';' (OSC 777's field separator), at
// most 120 characters. Inside tmux, each sequence is wrapped for tmux's
// passthrough (honoured with `set -g allow-passthrough on`).
func notification(title, body string, inTmux bool) string {
	title, body = oscText(title), oscText(body)
	seqs := []string{
		"\x1b]9;" + title + ": " + body + "\x07",
		"\x1b]777;notify;" + title + ";" + body + "\x07",
	}
	if inTmux {
		for i, s := range seqs {
			seqs[i] = "\x1bPtmux;" + strings.ReplaceAll(s, "\x1b", "\x1b\x1b") + "\x1b\\"
		}
	}
	return strings.Join(seqs, "")
}

func oscText(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			return ' '
		case r == ';':
			return ','
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}

// inTmux says whether the terminal is a tmux pane.
func inTmux() bool { return os.Getenv("TMUX") != "" }
