package term

import (
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/wire"
)

func statusBar(t *testing.T, m *Model) string {
	t.Helper()
	r := screen(t, m)
	n := m.layout().noticeH // a long notice's rows above it
	return strings.Join(r[len(r)-1-n:], " ")
}

// No notice outstays what it says. The quit question goes once Ctrl-C
// would interrupt instead; "retrying…" goes when the connection changes;
// news goes after a few seconds and errors after a while, and a tick says
// a frame is due when one does.
func TestNoticesDoNotGoStale(t *testing.T) {
	t.Parallel()
	m := demo()
	now := t0
	m.Now = func() time.Time { return now }
	s := m.Sessions[0]
	s.Phase = wire.PhaseIdle
	m.Key(key(tcell.KeyCtrlC, 0, 0))
	if !strings.Contains(statusBar(t, m), "press Ctrl-C again to quit") {
		t.Fatalf("no quit question: %q", statusBar(t, m))
	}
	m.Item(s.ID, itemStatus(wire.StatusPush{Phase: wire.PhaseRunning, TurnID: "t9"}))
	if bar := statusBar(t, m); strings.Contains(bar, "again to quit") {
		t.Fatalf("the quit question stayed while a turn runs: %q", bar)
	}
	if cmds := m.Key(key(tcell.KeyCtrlC, 0, 0)); m.Quit || len(cmds) != 1 {
		t.Fatalf("Ctrl-C: quit=%v %#v", m.Quit, cmds)
	}

	m.ConnState(client.State{Phase: client.Unavailable})
	m.setComposer("")
	m.Key(key(tcell.KeyRune, 'r', 0))
	if !strings.Contains(statusBar(t, m), "retrying…") {
		t.Fatalf("no retrying: %q", statusBar(t, m))
	}
	m.ConnState(client.State{Phase: client.Connected})
	if bar := statusBar(t, m); strings.Contains(bar, "retrying") {
		t.Fatalf("retrying stayed after connecting: %q", bar)
	}

	m.Item(s.ID, itemStatus(wire.StatusPush{Phase: wire.PhaseIdle}))
	m.Result(resPatched{Session: wire.Session{ID: s.ID, Title: "x"}})
	if !strings.Contains(statusBar(t, m), "settings saved") || m.Tick() {
		t.Fatalf("no settings saved: %q", statusBar(t, m))
	}
	now = now.Add(noticeFor + time.Millisecond)
	if !m.Tick() || strings.Contains(statusBar(t, m), "settings saved") {
		t.Fatalf("settings saved stayed: %q", statusBar(t, m))
	}
	m.Result(resSent{Session: s.ID, Err: wire.Errorf(wire.CodeTooLarge, "too big")})
	now = now.Add(noticeFor + time.Millisecond)
	if !strings.Contains(statusBar(t, m), "not sent") {
		t.Fatalf("an error went as fast as news: %q", statusBar(t, m))
	}
	now = now.Add(errorNoticeFor)
	if !m.Tick() || strings.Contains(statusBar(t, m), "not sent") {
		t.Fatalf("the error stayed: %q", statusBar(t, m))
	}
}

// A family emoji (a joined sequence) in a title and a notice leaves the
// status bar whole: drawn as its people side by side, the notice ends on
// the last column, and no joiner reaches the screen. Ctrl-L asks for a
// redraw of the whole terminal.
func TestJoinedEmojiKeepTheStatusBarWhole(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Resize(140, 20)
	family := "👨‍👩‍👧"
	m.Sessions[0].Title = family + " trip"
	m.notify(false, "renamed "+family)
	r := screen(t, m)
	bar := r[len(r)-1]
	if strings.Contains(strings.Join(r, ""), "\u200d") {
		t.Fatal("a zero-width joiner reached the screen")
	}
	if !strings.HasSuffix(bar, "renamed 👨👩👧 ") || width(bar) != m.Width {
		t.Fatalf("status bar %q is %d cells, want %d ending with the notice", bar, width(bar), m.Width)
	}
	if !contains(r, "👨👩👧 trip") {
		t.Fatalf("sidebar:\n%s", strings.Join(r, "\n"))
	}
	if cmds := m.Key(key(tcell.KeyCtrlL, 0, tcell.ModCtrl)); len(cmds) != 1 || cmds[0] != (cmdRedraw{}) {
		t.Fatalf("Ctrl-L: %#v", cmds)
	}
}

func itemStatus(st wire.StatusPush) client.Item {
	return client.Item{Frame: wire.Frame{Op: wire.PushStatus, Status: &st}}
}

// A turn waiting for a bot names the bot it waits for.
func TestWaitingNamesTheBot(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Resize(140, 20)
	m.Sessions[0].Provider = "bot:helper"
	m.Item(m.Sessions[0].ID, itemStatus(wire.StatusPush{Phase: wire.PhaseWaiting, TurnID: "t9"}))
	if bar := statusBar(t, m); !strings.Contains(bar, "waiting for bot helper to connect 0 s (Esc interrupts)") {
		t.Fatalf("status bar %q", bar)
	}
}

// The status bar counts viewers only while connected: while the daemon is
// away (or cannot start) the last count is stale, and it is not shown.
func TestViewerCountOnlyWhileConnected(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Resize(100, 30)
	m.Focused().Viewers = 2
	m.ConnState(client.State{Phase: client.Connected})
	if r := screen(t, m); !contains(r, "2 viewers") {
		t.Fatalf("connected, no count:\n%s", strings.Join(r, "\n"))
	}
	for _, p := range []client.Phase{client.Reconnecting, client.StartFailed, client.Unavailable} {
		m.ConnState(client.State{Phase: p, Reason: "config.toml line 3"})
		if r := screen(t, m); contains(r, "viewer") {
			t.Fatalf("%v: a count shown:\n%s", p, strings.Join(r, "\n"))
		}
	}
}

// An error about what was typed (an unknown command) goes once the person
// writes on, after it has been seen; a notice about the connection stays
// while its state does. The status bar ends with no stray separator when
// there is nothing to say of the session.
func TestTypingOnDropsAnOldNotice(t *testing.T) {
	t.Parallel()
	m := demo()
	now := t0
	m.Now = func() time.Time { return now }
	runLine(m, "/bogus")
	if !strings.Contains(statusBar(t, m), "unknown command /bogus") {
		t.Fatalf("no refusal: %q", statusBar(t, m))
	}
	typeText(m, "h")
	if !strings.Contains(statusBar(t, m), "unknown command /bogus") {
		t.Fatalf("the refusal went before it could be read: %q", statusBar(t, m))
	}
	now = now.Add(staleAfter)
	typeText(m, "i")
	if bar := statusBar(t, m); strings.Contains(bar, "unknown command") {
		t.Fatalf("the refusal stayed while the person wrote on: %q", bar)
	}

	m.ConnState(client.State{Phase: client.Unavailable})
	m.setComposer("")
	m.Key(key(tcell.KeyRune, 'r', 0))
	now = now.Add(time.Minute)
	typeText(m, "x")
	if !strings.Contains(statusBar(t, m), "retrying…") {
		t.Fatalf("a connection notice went with typing: %q", statusBar(t, m))
	}

	s := m.Sessions[0]
	s.Model, s.Effort, s.Phase, s.Queued = "", "", wire.PhaseIdle, 0
	m.ConnState(client.State{Phase: client.Stopped})
	m.notify(false, "")
	if bar := strings.TrimRight(statusBar(t, m), " "); strings.HasSuffix(bar, "│") {
		t.Fatalf("a stray separator ends the status bar: %q", bar)
	}
}

// A running turn says in the status bar how long it has run, counted from
// its started event (or from when the client learnt of it), and a tick
// redraws once a second while it runs, not on every beat.
func TestRunningTurnShowsItsTime(t *testing.T) {
	t.Parallel()
	m := demo()
	now := t0
	m.Now = func() time.Time { return now }
	s := m.Sessions[0]
	m.Item(s.ID, itemStatus(wire.StatusPush{Phase: wire.PhaseIdle}))
	m.Item(s.ID, itemStatus(wire.StatusPush{Phase: wire.PhaseRunning, TurnID: "t10"}))
	started := wire.Event{Offset: 90, Type: wire.EventTurn, State: wire.TurnStarted, TurnID: "t10", At: t0.Add(-3 * time.Second)}
	m.Item(s.ID, itemEvent(started))
	m.Tick()
	if bar := statusBar(t, m); !strings.Contains(bar, "running 3 s (Esc interrupts)") {
		t.Fatalf("status bar %q", bar)
	}
	now = now.Add(400 * time.Millisecond)
	if m.Tick() {
		t.Fatal("a tick redrew within the same second")
	}
	now = now.Add(62 * time.Second)
	if !m.Tick() || !strings.Contains(statusBar(t, m), "running 1 m 05 s") {
		t.Fatalf("after a minute: %q", statusBar(t, m))
	}
	m.Item(s.ID, itemStatus(wire.StatusPush{Phase: wire.PhaseIdle}))
	if bar := statusBar(t, m); strings.Contains(bar, "running") {
		t.Fatalf("the time stayed after the turn: %q", bar)
	}
}
