package term

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/wire"
)

func turnEnd(off int64, state, errText string) wire.Event {
	return wire.Event{Offset: off, Type: wire.EventTurn, TurnID: "t1", State: state, Error: errText, At: t0}
}

// A turn that ends in a session not in front of the user rings and asks
// for a desktop notification; one in the focused session does not, unless
// the terminal window lost the focus; history does not; /notify off
// silences it all.
func TestNotifyWhenATurnEndsElsewhere(t *testing.T) {
	t.Parallel()
	m := demo()
	front, bg := m.Sessions[0], m.Sessions[1]
	m.Item(bg.ID, itemStatus(wire.StatusPush{Phase: wire.PhaseIdle})) // loaded: what follows is live
	cmds := m.Item(bg.ID, itemEvent(turnEnd(5, wire.TurnCompleted, "")))
	if len(cmds) != 1 || cmds[0] != (cmdNotify{Title: "albedo: notes", Body: "reply ready"}) {
		t.Fatalf("completed elsewhere: %#v", cmds)
	}
	if cmds := m.Item(bg.ID, itemEvent(turnEnd(6, wire.TurnFailed, "boom"))); len(cmds) != 1 || cmds[0].(cmdNotify).Body != "turn failed: boom" {
		t.Fatalf("failed elsewhere: %#v", cmds)
	}
	if cmds := m.Item(bg.ID, itemEvent(turnEnd(7, wire.TurnInterrupted, ""))); cmds != nil {
		t.Fatalf("interrupted: %#v", cmds)
	}
	m.Item(front.ID, itemStatus(wire.StatusPush{Phase: wire.PhaseIdle}))
	if cmds := m.Item(front.ID, itemEvent(turnEnd(8, wire.TurnCompleted, ""))); cmds != nil {
		t.Fatalf("in front: %#v", cmds)
	}
	m.TermFocused = false
	if cmds := m.Item(front.ID, itemEvent(turnEnd(9, wire.TurnCompleted, ""))); len(cmds) != 1 {
		t.Fatalf("in front of a window without focus: %#v", cmds)
	}
	runLine(m, "/notify off")
	if cmds := m.Item(bg.ID, itemEvent(turnEnd(10, wire.TurnCompleted, ""))); cmds != nil || !m.Quiet {
		t.Fatalf("quiet: %#v", cmds)
	}
	// History a reset brings is not news.
	m.Quiet = false
	m.Item(bg.ID, itemReset(11))
	if cmds := m.Item(bg.ID, itemEvent(turnEnd(11, wire.TurnCompleted, ""))); cmds != nil {
		t.Fatalf("history: %#v", cmds)
	}
}

// The escape sequences carry no control character or separator from the
// text they show, whatever a title or an error holds.
func TestNotificationSequencesAreClean(t *testing.T) {
	t.Parallel()
	got := notification("albedo: a;b", "evil\x1b]0;pwned\x07 text\n"+strings.Repeat("x", 300), false)
	want := "\x1b]9;albedo: a,b: evil ]0,pwned  text " + strings.Repeat("x", 99) + "…\x07"
	if !strings.HasPrefix(got, want) {
		t.Fatalf("OSC 9: %q", got)
	}
	if n := strings.Count(got, "\x1b"); n != 2 {
		t.Fatalf("%d escapes in %q, want 2", n, got)
	}
	if !strings.Contains(got, "\x1b]777;notify;albedo: a,b;evil ") {
		t.Fatalf("OSC 777: %q", got)
	}
	wrapped := notification("t", "b", true)
	if !strings.HasPrefix(wrapped, "\x1bPtmux;\x1b\x1b]9;t: b\x07\x1b\\") {
		t.Fatalf("tmux passthrough: %q", wrapped)
	}
}

// Ctrl-T shows the time of each message in its header, and hides it again.
func TestTimestampsToggle(t *testing.T) {
	t.Parallel()
	m := demo()
	stamp := t0.Local().Format(stampLayout(t0))
	if contains(screen(t, m), stamp) {
		t.Fatalf("a time shown before Ctrl-T")
	}
	m.Key(key(tcell.KeyCtrlT, 0, tcell.ModCtrl))
	if r := screen(t, m); !contains(r, "user "+stamp) || !contains(r, "assistant · m1 "+stamp) {
		t.Fatalf("after Ctrl-T:\n%s", strings.Join(r, "\n"))
	}
	m.Key(key(tcell.KeyCtrlT, 0, tcell.ModCtrl))
	if contains(screen(t, m), stamp) {
		t.Fatalf("a time shown after the second Ctrl-T")
	}
}

// itemReset is a reset whose history runs to head.
func itemReset(head int64) client.Item {
	return client.Item{Frame: wire.Frame{Op: wire.PushReset, Reset: &wire.ResetPush{Epoch: "e2", Head: head}}}
}
