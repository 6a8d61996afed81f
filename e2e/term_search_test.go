//go:build !e2e_only || e2e_core

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
	"github.com/google/uuid"

	"albedo/wire"
)

// The terminal's /search finds a message in another session, older than
// the hundred events a session loads at first; Enter opens that session
// with the message in view.
func TestTerminalSearchOpensAnOldHit(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "here", create: wire.SessionCreate{Title: "here"}})
	if _, err := fx.c.CreateSession(fx.ctx, "far", wire.SessionCreate{Title: "far"}); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.c.PutInput(fx.ctx, "far", uuid.Must(uuid.NewV7()).String(), "the zeppelin lands at dawn"); err != nil {
		t.Fatal(err)
	}
	for i := range 80 { // 160 events after it: echo answers each
		if _, err := fx.c.PutInput(fx.ctx, "far", uuid.Must(uuid.NewV7()).String(), fmt.Sprint("filler ", i)); err != nil {
			t.Fatal(err)
		}
	}
	waitTurnsClosed(t, fx.ctx, fx.c, "far", 81)
	u := startUI(t, fx.c, 120, 30)
	u.waitFor("the sidebar", func(s string) bool { return strings.Contains(s, "far") && strings.Contains(s, "here") })
	u.typeLine("/search zeppelin")
	u.waitFor("the hits", func(s string) bool { return strings.Contains(s, "search: zeppelin · 2 ·") })
	u.scr.InjectKey(tcell.KeyDown, 0, tcell.ModNone) // the user's input, below the echo
	u.scr.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
	u.waitFor("the old message, opened", func(s string) bool {
		return strings.Contains(s, "the zeppelin lands at dawn") && !strings.Contains(s, "search: zeppelin")
	})
}
