package term

import (
	"testing"
	"time"

	"albedo/client"
	"albedo/wire"
)

// The terminal sets the read marker of the session in front of the person
// to its end, at most every readEvery, and not while its window has lost
// the focus or the transcript is scrolled up; a read push from another
// device brings a session's unread count down to what came after it.
func TestReadMarkers(t *testing.T) {
	t.Parallel()
	m := demo()
	now := t0
	m.Now = func() time.Time { return now }
	a, b := m.Sessions[0], m.Sessions[1]
	if cmds := m.MarkRead(); len(cmds) != 1 || cmds[0] != (cmdRead{Session: a.ID, Offset: 2}) {
		t.Fatalf("first: %#v", cmds)
	}
	m.Item(a.ID, itemEvent(msg(3, "assistant", "m1", "more")))
	if cmds := m.MarkRead(); cmds != nil {
		t.Fatalf("within a second: %#v", cmds)
	}
	now = now.Add(readEvery)
	m.TermFocused = false
	if cmds := m.MarkRead(); cmds != nil {
		t.Fatalf("while the window has no focus: %#v", cmds)
	}
	m.TermFocused = true
	if cmds := m.MarkRead(); len(cmds) != 1 || cmds[0] != (cmdRead{Session: a.ID, Offset: 3}) {
		t.Fatalf("a second on: %#v", cmds)
	}
	if cmds := m.MarkRead(); cmds != nil {
		t.Fatalf("nothing new: %#v", cmds)
	}

	b.Unread = 0
	m.Item(b.ID, itemReset(0))
	for off := int64(1); off <= 4; off++ {
		m.Item(b.ID, itemEvent(msg(off, "user", "ann", "x")))
	}
	if b.Unread != 4 {
		t.Fatalf("unread %d", b.Unread)
	}
	m.Item(b.ID, client.Item{Frame: wire.Frame{Op: wire.PushRead, Session: b.ID, Read: &wire.ReadPush{Session: b.ID, Offset: 3}}})
	if b.Unread != 1 {
		t.Fatalf("after reading up to 3 elsewhere: %d unread", b.Unread)
	}
	m.Item(b.ID, client.Item{Frame: wire.Frame{Op: wire.PushRead, Session: b.ID, Read: &wire.ReadPush{Session: b.ID, Offset: 4}}})
	if b.Unread != 0 {
		t.Fatalf("after reading it all elsewhere: %d unread", b.Unread)
	}
}
