//go:build !e2e_only || e2e_core

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
	"github.com/google/uuid"
)

// In the terminal: Ctrl-Y selects the last reply and f forks there (the
// fork holds the parent's history up to the end of that turn, byte for
// byte, and the status bar says where it came from); in the parent again
// (/parent), e on the last question forks just before it with its text
// in the composer, which Enter sends changed. The original is left as it
// was; /forks lists both forks.
func TestTerminalForkAndEdit(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "here"})
	for i, text := range []string{"first question", "second question"} {
		if _, err := fx.c.PutInput(fx.ctx, "here", uuid.NewString(), text); err != nil {
			t.Fatal(err)
		}
		waitTurnsClosed(t, fx.ctx, fx.c, "here", i+1)
	}
	parent := pageEventsOf(t, fx, "here")
	end := closedTurn(waitTurnsClosed(t, fx.ctx, fx.c, "here", 2), 2)
	u := startUI(t, fx.c, 120, 30)
	u.waitFor("the session", func(s string) bool { return strings.Contains(s, "echo: second question") })
	u.scr.InjectKey(tcell.KeyCtrlY, 0, tcell.ModNone)
	u.scr.InjectKey(tcell.KeyRune, 'f', tcell.ModNone)
	origin := fmt.Sprintf("← here #%d", end)
	u.waitFor("the fork, open", func(s string) bool { return strings.Contains(s, origin) })
	forks, err := fx.c.Forks(fx.ctx, "here")
	if err != nil || len(forks) != 1 || forks[0].Parent.Offset != int64(end) {
		t.Fatalf("forks: %+v %v", forks, err)
	}
	if got := pageEventsOf(t, fx, forks[0].ID); strings.Join(got, "\n") != strings.Join(parent[:end], "\n") {
		t.Fatalf("the fork holds\n%s", strings.Join(got, "\n"))
	}

	u.typeLine("/parent")
	u.waitFor("the parent", func(s string) bool {
		return !strings.Contains(s, origin) && strings.Contains(s, "echo: second question")
	})
	u.scr.InjectKey(tcell.KeyEscape, 0, tcell.ModNone) // the selection /parent left on the fork point
	u.scr.InjectKey(tcell.KeyCtrlY, 0, tcell.ModNone)
	u.scr.InjectKey(tcell.KeyUp, 0, tcell.ModNone) // the second question
	u.scr.InjectKey(tcell.KeyRune, 'e', tcell.ModNone)
	u.waitFor("the edit's fork", func(s string) bool { return strings.Contains(s, "← here #") && strings.Contains(s, "a fork of here") })
	u.scr.InjectKeyBytes([]byte(", edited"))
	u.scr.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
	u.waitFor("the edited reply", func(s string) bool { return strings.Contains(s, "echo: second question, edited") })
	if now := pageEventsOf(t, fx, "here"); strings.Join(now, "\n") != strings.Join(parent, "\n") {
		t.Fatalf("the parent changed:\n%s", strings.Join(now, "\n"))
	}
	u.typeLine("/parent")
	u.waitFor("the parent", func(s string) bool { return !strings.Contains(s, "← here #") })
	u.scr.InjectKey(tcell.KeyEscape, 0, tcell.ModNone)
	u.typeLine("/forks")
	u.waitFor("two forks", func(s string) bool { return strings.Count(s, "fork at #") == 2 })
}
