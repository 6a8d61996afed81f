package term

import (
	"slices"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"albedo/wire"
)

// /respond and /participants change the focused session with its ETag;
// /respond takes always or mentions only; /participants takes names
// (an @ before one, commas between, are taken off) and with none clears
// them once the person confirms. A read-only view refuses both.
func TestParticipantCommands(t *testing.T) {
	t.Parallel()
	m := party()
	m.Sessions[0].ETag = `"9"`
	patch := func(line string) wire.SessionPatch {
		t.Helper()
		cmds := runLine(m, line)
		if len(cmds) != 1 {
			t.Fatalf("%s: %#v (notice %q)", line, cmds, m.Notice)
		}
		p := cmds[0].(cmdPatch)
		if p.Session != "s-aaaaaaaa" || p.ETag != `"9"` {
			t.Fatalf("%s: %+v", line, p)
		}
		return p.Patch
	}
	if p := patch("/respond mentions"); p.Respond == nil || *p.Respond != "mentions" || p.Participants != nil {
		t.Fatalf("/respond mentions: %+v", p)
	}
	if p := patch("/respond always"); p.Respond == nil || *p.Respond != "always" {
		t.Fatalf("/respond always: %+v", p)
	}
	if p := patch("/participants second, @bot:helper  sam"); p.Participants == nil || !slices.Equal(*p.Participants, []string{"second", "bot:helper", "sam"}) || p.Respond != nil {
		t.Fatalf("/participants: %+v", p)
	}
	if cmds := runLine(m, "/respond sometimes"); cmds != nil || !m.NoticeErr || !strings.Contains(m.Notice, "usage: /respond always|mentions") {
		t.Fatalf("/respond sometimes: %#v %q", cmds, m.Notice)
	}
	if cmds := runLine(m, "/respond"); cmds != nil || m.NoticeErr || !strings.Contains(m.Notice, "this session: answers all") {
		t.Fatalf("/respond: %#v %q", cmds, m.Notice)
	}

	if cmds := runLine(m, "/participants"); cmds != nil || m.asking == nil || !strings.Contains(m.asking.prompt, "second, bot:helper, sam") {
		t.Fatalf("/participants asked nothing: %#v", cmds)
	}
	cmds := m.Key(key(tcell.KeyRune, 'y', 0))
	if len(cmds) != 1 {
		t.Fatalf("y: %#v", cmds)
	}
	if p := cmds[0].(cmdPatch).Patch; p.Participants == nil || *p.Participants == nil || len(*p.Participants) != 0 {
		t.Fatalf("clearing: %+v", p) // [] clears: nil would change nothing
	}
	m.Sessions[0].Participants = nil
	if cmds := runLine(m, "/participants"); cmds != nil || m.asking != nil || !strings.Contains(m.Notice, "no participants") {
		t.Fatalf("/participants with none: %#v %q", cmds, m.Notice)
	}

	m.ReadOnly = true
	for _, line := range []string{"/respond mentions", "/participants second"} {
		if cmds := runLine(m, line); cmds != nil || !strings.Contains(m.Notice, "read-only") {
			t.Fatalf("read-only %s: %#v %q", line, cmds, m.Notice)
		}
	}
}

// The status bar says when the session answers and who may be
// mentioned, as the daemon read it; the settings events after it
// change both, and a reading older than an event applied changes
// nothing. A session as sessions were before participants says
// nothing of them.
func TestParticipantsInStatusAndTranscript(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Resize(120, 24)
	status := func() string { r := screen(t, m); return r[len(r)-1] }
	if strings.Contains(status(), "answers all") {
		t.Fatalf("a plain session's status: %q", status())
	}
	m.info(resInfo{Session: wire.Session{ID: "s-aaaaaaaa", ResolvedProvider: "first", Participants: []string{"second"}, Respond: "mentions", Head: 2}})
	if !strings.Contains(status(), "m1 · effort high · mentions only · @first @second ·") {
		t.Fatalf("status: %q", status())
	}
	always, list := "always", []string{"second", "bot:helper"}
	m.Item("s-aaaaaaaa", itemEvent(wire.Event{Offset: 3, Type: wire.EventSettings, Respond: &always, Participants: &list, By: "ann", At: t0}))
	if !strings.Contains(status(), "answers all · @first @second @helper") {
		t.Fatalf("status after the event: %q", status())
	}
	if r := screen(t, m); !contains(r, "· answers all, participants second, bot:helper (by ann)") {
		t.Fatalf("the settings event:\n%s", strings.Join(r, "\n"))
	}
	none := []string{}
	m.Item("s-aaaaaaaa", itemEvent(wire.Event{Offset: 4, Type: wire.EventSettings, Participants: &none, By: "ann", At: t0}))
	if r := screen(t, m); !contains(r, "· participants none (by ann)") || strings.Contains(r[len(r)-1], "answers all") {
		t.Fatalf("participants cleared:\n%s", strings.Join(r, "\n"))
	}
	m.Result(resPatched{Session: wire.Session{ID: "s-aaaaaaaa", Participants: []string{"stale"}, Respond: "mentions", Head: 3}})
	if s := m.Sessions[0]; len(s.Participants) != 0 || s.Respond != "always" {
		t.Fatalf("an older reading won over a newer event: %q %q", s.Participants, s.Respond)
	}
	m.Result(resPatched{Session: wire.Session{ID: "s-aaaaaaaa", ResolvedProvider: "first", Participants: []string{"sam"}, Respond: "mentions", Head: 5}})
	if !strings.Contains(status(), "mentions only · @first @sam") {
		t.Fatalf("status after a patch: %q", status())
	}
}

// Answering only mentions, a message that mentions no one who answers
// is sent, and the notice says no one will answer it; one that mentions
// a participant says nothing of the kind.
func TestQuietMessageSaysSo(t *testing.T) {
	t.Parallel()
	m := party()
	m.Sessions[0].Respond = wire.RespondMentions
	if cmds := runLine(m, "hi all, mail ann@second"); len(cmds) != 1 || !strings.Contains(m.Notice, "no turn: this session answers only @mentions") {
		t.Fatalf("a quiet message: %#v %q", cmds, m.Notice)
	}
	m.notify(false, "")
	if cmds := runLine(m, "@Second what now?"); len(cmds) != 1 || m.Notice != "" {
		t.Fatalf("a mention: %#v %q", cmds, m.Notice)
	}
	m.Sessions[0].Respond = wire.RespondAlways
	if runLine(m, "hi all"); m.Notice != "" {
		t.Fatalf("answering all: %q", m.Notice)
	}
}

// Among participants, a reply streams under the name of whoever its
// turn started for, and its message keeps that name.
func TestParticipantReplyIsNamed(t *testing.T) {
	t.Parallel()
	m := party()
	m.Item("s-aaaaaaaa", itemEvent(wire.Event{Offset: 3, Type: wire.EventTurn, TurnID: "t3", State: wire.TurnStarted, Author: "second", At: t0}))
	m.Sessions[0].StreamTurn, m.Sessions[0].StreamText = "t3", "thinking aloud"
	if r := screen(t, m); !contains(r, "assistant · second …") {
		t.Fatalf("the stream's header:\n%s", strings.Join(r, "\n"))
	}
	reply := msg(4, wire.RoleAssistant, "second", "done thinking")
	reply.TurnID, reply.AuthorID = "t3", "provider:second"
	m.Item("s-aaaaaaaa", itemEvent(reply))
	if r := screen(t, m); !contains(r, "assistant · second") || !contains(r, "done thinking") || contains(r, "thinking aloud") {
		t.Fatalf("the reply:\n%s", strings.Join(r, "\n"))
	}
}
