package term

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/wire"
)

// A reply cut off, then continued: the rest is drawn in the reply's
// block, its text joined to the reply's under one header, and the
// marks of the cut (the reply's [interrupted], the turn's ⏹ line) go;
// a second cut and continue join the same block. /copy and the pick
// take the reply whole; the pick does not stop on the rest alone.
// The cut says /continue runs on it; /continue asks the daemon, and a
// refusal is said in its words.
func TestContinuationJoinsItsReply(t *testing.T) {
	t.Parallel()
	m := demo()
	s := m.Sessions[0]
	s.StreamTurn, s.StreamText, s.Phase = "", "", wire.PhaseIdle
	cut := func(off int64, turn, text string, continues int64) wire.Event {
		ev := msg(off, wire.RoleAssistant, "m1", text)
		ev.TurnID, ev.State, ev.Continues = turn, wire.MessageInterrupted, continues
		return ev
	}
	ended := func(off int64, turn string) wire.Event {
		return wire.Event{Offset: off, Type: wire.EventTurn, TurnID: turn, State: wire.TurnInterrupted, Reason: "user"}
	}
	s.Events = s.Events[:1]
	for _, ev := range []wire.Event{cut(2, "t1", "Once upon ", 0), ended(3, "t1")} {
		m.Item(s.ID, itemEvent(ev))
	}
	r := screen(t, m)
	if !contains(r, "[interrupted]") || !contains(r, "⏹ interrupted (user)") || !strings.Contains(m.Notice, "/continue runs on it") {
		t.Fatalf("the cut reply (%q):\n%s", m.Notice, strings.Join(r, "\n"))
	}
	m.Result(resInterrupted{Session: s.ID})
	if !strings.Contains(m.Notice, "/continue runs on it") {
		t.Fatalf("the interrupt's answer, after: %q", m.Notice)
	}
	cmds := enter(m, "/continue")
	if len(cmds) != 1 || cmds[0] != (cmdContinue{Session: s.ID}) {
		t.Fatalf("/continue: %#v", cmds)
	}
	m.Result(resContinued{Session: s.ID, Err: &client.Error{Code: wire.CodeConflict, Message: "nothing to continue: the newest reply is whole"}})
	if !m.NoticeErr || !strings.Contains(m.Notice, "not continued: nothing to continue: the newest reply is whole") {
		t.Fatalf("a refusal: %q", m.Notice)
	}

	for _, ev := range []wire.Event{cut(5, "t2", "a time, ", 2), ended(6, "t2")} {
		m.Item(s.ID, itemEvent(ev))
	}
	// The rest streams under a header that says whose rest it is.
	m.Item(s.ID, itemEvent(wire.Event{Offset: 7, Type: wire.EventTurn, TurnID: "t3", State: wire.TurnStarted, Continues: 5}))
	m.Item(s.ID, client.Item{Frame: wire.Frame{Op: wire.PushDelta, Text: &wire.TextPush{TurnID: "t3", Text: "the end."}}})
	if r := screen(t, m); !contains(r, "assistant · m1 "+continuingNote) {
		t.Fatalf("the rest streaming:\n%s", strings.Join(r, "\n"))
	}
	rest := msg(8, wire.RoleAssistant, "m1", "the end.")
	rest.TurnID, rest.Continues = "t3", 5
	m.Item(s.ID, itemEvent(rest))
	r = screen(t, m)
	if !contains(r, "Once upon a time, the end.") || contains(r, "[interrupted]") || contains(r, "⏹") || strings.Count(strings.Join(r, "\n"), "assistant · m1") != 1 {
		t.Fatalf("the reply whole:\n%s", strings.Join(r, "\n"))
	}
	if got := s.lastReply(); got != "Once upon a time, the end." {
		t.Fatalf("/copy takes %q", got)
	}
	m.Key(key(tcell.KeyCtrlY, 0, 0))
	if text, _ := s.pickedText(m.pick.event); m.pick.event != 1 || text != "Once upon a time, the end." {
		t.Fatalf("the pick: event %d, %q", m.pick.event, text)
	}
	m.Key(key(tcell.KeyEscape, 0, 0))

	// Drawn again (another width): the same.
	m.Resize(80, 20)
	if r := screen(t, m); !contains(r, "Once upon a time, the end.") || contains(r, "⏹") {
		t.Fatalf("drawn again:\n%s", strings.Join(r, "\n"))
	}
}

// A continuation whose reply is not loaded (older history) is drawn as a
// message of its own.
func TestContinuationAlone(t *testing.T) {
	t.Parallel()
	m := demo()
	s := m.Sessions[0]
	s.StreamTurn, s.StreamText = "", ""
	rest := msg(40, wire.RoleAssistant, "m1", "the rest of it")
	rest.Continues = 12
	s.Events, s.More = []wire.Event{rest}, true
	s.rerender()
	if r := screen(t, m); !contains(r, "assistant · m1") || !contains(r, "the rest of it") {
		t.Fatalf("alone:\n%s", strings.Join(r, "\n"))
	}
}
