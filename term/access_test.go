package term

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/wire"
)

// said is the status bar and a long notice's rows above it, their
// spaces as one.
func said(t *testing.T, m *Model) string {
	t.Helper()
	return strings.Join(strings.Fields(statusBar(t, m)), " ")
}

// reset is a reset push of the given reason.
func reset(reason string) client.Item {
	return client.Item{Frame: wire.Frame{Op: wire.PushReset, Reset: &wire.ResetPush{Reason: reason}}}
}

// A member whose grant is removed gets a reset of reason revoked: the
// session leaves the sidebar, the status bar says their access to it was
// removed (not that it was deleted), and what they were writing there is
// kept for Up to recall. The feed, which may say the session is gone
// first, says why as well (its revoked), and the reset after it says
// nothing twice; a session the feed takes away unseen goes quietly, and
// its reset, if it comes, says why.
func TestRevokedAccessIsSaidAndTheDraftKept(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Sessions[1].Phase = wire.PhaseIdle
	typeText(m, "half a thought")
	m.Item("s-aaaaaaaa", reset(wire.ResetRevoked))
	if m.session("s-aaaaaaaa") != nil || m.Focused() == nil || m.Focused().ID != "s-bbbbbbbb" {
		t.Fatalf("after the revoke: %v, focus %v", ids(m), m.Focused())
	}
	bar := said(t, m)
	if !strings.Contains(bar, "your access to “planning” was removed") || strings.Contains(bar, "deleted") || !strings.Contains(bar, "Up in an empty composer recalls it") {
		t.Fatalf("the status bar says %q", bar)
	}
	m.Key(key(tcell.KeyUp, 0, 0))
	if got := string(m.Composer); got != "half a thought" {
		t.Fatalf("Up recalls %q", got)
	}

	m = demo()
	m.Focus = 1
	m.Feed(client.FeedUpdate{Gone: []string{"s-bbbbbbbb"}, Revoked: []string{"s-bbbbbbbb"}})
	if m.session("s-bbbbbbbb") != nil || m.Notice != "your access to “notes” was removed" {
		t.Fatalf("the feed's revoked: %v, notice %q", ids(m), m.Notice)
	}
	m.Notice = ""
	m.Item("s-bbbbbbbb", reset(wire.ResetRevoked))
	if m.Notice != "" {
		t.Fatalf("the reset after the feed's revoked said it again: %q", m.Notice)
	}
	m.Feed(client.FeedUpdate{Gone: []string{"s-aaaaaaaa"}})
	if m.session("s-aaaaaaaa") != nil || m.Notice != "session “planning” was deleted" {
		t.Fatalf("the feed's gone, not revoked: %v, notice %q", ids(m), m.Notice)
	}

	m = demo()
	m.Notice = ""
	m.Feed(client.FeedUpdate{Gone: []string{"s-bbbbbbbb"}, Revoked: []string{"s-bbbbbbbb"}})
	if m.session("s-bbbbbbbb") != nil || m.Notice != "" {
		t.Fatalf("a session unseen and revoked: %v, notice %q", ids(m), m.Notice)
	}
	m.Item("s-bbbbbbbb", reset(wire.ResetRevoked))
	if m.Notice != "your access to “notes” was removed" {
		t.Fatalf("its reset after the feed: %q", m.Notice)
	}
	m.Item("s-aaaaaaaa", reset(wire.ResetDeleted))
	if m.session("s-aaaaaaaa") != nil || m.Notice != "session “planning” was deleted" {
		t.Fatalf("a deleted session: %v, notice %q", ids(m), m.Notice)
	}
}

// A session a member may only read looks read-only, as the page has it:
// the composer's place says so and the status bar too; a key typed is
// refused at once with the whole sentence, not taken; a /command still
// runs, and /new makes a session of their own. A send refused all the
// same (access narrowed while writing) gives the text back.
func TestReadAccessLooksReadOnly(t *testing.T) {
	t.Parallel()
	m := demo()
	s := m.Sessions[0]
	s.Phase, s.Access = wire.PhaseIdle, wire.AccessRead
	r := screen(t, m)
	if !contains(r, "read-only: you may read this session, not write in it") || !strings.Contains(statusBar(t, m), "read-only") {
		t.Fatalf("a read-only session:\n%s", strings.Join(r, "\n"))
	}
	typeText(m, "hello")
	if len(m.Composer) != 0 || !m.NoticeErr {
		t.Fatalf("typing in a read-only session: composer %q, notice %q", string(m.Composer), m.Notice)
	}
	if bar := said(t, m); !strings.Contains(bar, "read-only: you may read this session, not write in it (/help lists what you can do)") {
		t.Fatalf("the refusal is not whole: %q", bar)
	}
	if cmds := runLine(m, "/new"); len(cmds) != 1 || cmds[0] != (cmdNewSession{}) {
		t.Fatalf("/new in a read-only session: %#v", cmds)
	}
	if cmds := runLine(m, "/title x"); len(cmds) != 0 {
		t.Fatalf("/title in a read-only session: %#v", cmds)
	}

	s.Access = wire.AccessWrite
	cmds := runLine(m, "my words")
	if len(cmds) != 1 || cmds[0] != (cmdSend{Session: s.ID, Text: "my words"}) {
		t.Fatalf("sent %#v", cmds)
	}
	refusal := &client.Error{Status: 403, Code: wire.CodeForbidden, Message: `read access to session "s-aaaaaaaa" does not let ann send`}
	m.Result(resSent{Session: s.ID, Text: "my words", Err: refusal})
	if got := string(m.Composer); got != "my words" {
		t.Fatalf("a refused send left the composer %q", got)
	}
	bar := said(t, m)
	if !strings.Contains(bar, "not sent: you may only read this session; it is back in the composer") || strings.Contains(bar, "403") {
		t.Fatalf("the refusal: %q", bar)
	}
}

// A token the daemon refuses for good (revoked: a member removed, a link
// revoked or expired) is said as it is, with no r to retry: trying again
// would be refused again.
func TestRefusedTokenIsSaid(t *testing.T) {
	t.Parallel()
	refused := &wire.Error{Code: wire.CodeUnauthorized, Message: "the daemon refused this token: it is wrong, or was revoked"}
	for _, tc := range []struct {
		readOnly bool
		err      *wire.Error
		want     string
	}{
		{false, refused, "your access was removed: this token was revoked"},
		{true, refused, "this link was revoked: ask its owner for a new one"},
		{true, &wire.Error{Code: wire.CodeUnauthorized, Message: "this link has expired: ask for a new one"}, "this link has expired: ask its owner for a new one"},
	} {
		m := demo()
		m.ReadOnly = tc.readOnly
		m.Server = "https://albedo.example"
		m.ConnState(client.State{Phase: client.Unavailable, Err: tc.err})
		bar := statusBar(t, m)
		if !strings.Contains(bar, tc.want) || strings.Contains(bar, "retry") || strings.Contains(bar, "unavailable") {
			t.Fatalf("read-only %v: %q", tc.readOnly, bar)
		}
		for _, c := range m.Key(key(tcell.KeyRune, 'r', 0)) {
			if c == (cmdRetry{}) {
				t.Fatalf("read-only %v: r retries", tc.readOnly)
			}
		}
	}
}

// Errors speak to people: no HTTP status, no route, no code; and a long
// one is shown whole, wrapped on rows of its own above the status bar.
func TestErrorsAreSpokenWhole(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&client.Error{Status: 403, Code: wire.CodeForbidden, Message: "only an admin or the session's creator may call DELETE /v1/sessions/:id"}, "only the session's creator or an admin may do that"},
		{&client.Error{Status: 404, Code: wire.CodeNotFound, Message: `session "x" not found`}, "it is gone, or you no longer have access to it"},
		{&client.Error{Status: 400, Code: wire.CodeBadRequest, Message: "title too long"}, "title too long"},
		{&client.Error{Status: 405, Code: wire.CodeMethodNotAllowed, Message: "use PUT /v1/sessions/{id}/read"}, "use do that"},
		{wire.Errorf(wire.CodeTooLarge, "input is over 262144 bytes"), "input is over 262144 bytes"},
		{client.ErrUnavailable, "the daemon cannot answer just now: try again in a moment"},
	} {
		got := spoken(tc.err)
		if got != tc.want {
			t.Errorf("%v: %q, want %q", tc.err, got, tc.want)
		}
	}

	m := demo()
	long := "not changed: " + strings.Repeat("a sentence that goes on and on, ", 6) + "and ends here"
	m.notify(true, long)
	r := screen(t, m)
	text := strings.Join(r[len(r)-1-m.layout().noticeH:len(r)-1], " ")
	if m.layout().noticeH < 2 || !strings.Contains(strings.Join(strings.Fields(text), " "), long) {
		t.Fatalf("the notice, whole:\n%s", strings.Join(r, "\n"))
	}
	if !strings.HasPrefix(r[len(r)-1], " connected │ m1") {
		t.Fatalf("the status bar under it: %q", r[len(r)-1])
	}
}
