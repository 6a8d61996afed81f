//go:build !e2e_only || e2e_core

package e2e

import (
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"albedo/wire"
)

// A session's viewers are the terminals looking at it, not every terminal
// that follows it in its sidebar: two terminals on two sessions show the
// owner once each; when the second moves to the first's session, both
// show the owner on two devices there, and the status the API gives
// agrees.
func TestViewersAreWhoLooks(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "a", create: wire.SessionCreate{Title: "alpha"}})
	if _, err := fx.c.CreateSession(fx.ctx, "b", wire.SessionCreate{Title: "beta"}); err != nil {
		t.Fatal(err)
	}
	// b is newer, so it is on top of both sidebars and focused at start:
	// both terminals look at it.
	ms, err := fx.c.Members(fx.ctx)
	if err != nil || len(ms) != 1 {
		t.Fatalf("members %+v: %v", ms, err)
	}
	twice, once := "connected │ watching: "+ms[0].Name+" ×2", "connected │ watching: "+ms[0].Name+" "
	one := startUI(t, fx.c, 100, 30)
	two := startUI(t, fx.c, 100, 30)
	one.waitFor("b with two viewers", has(twice))
	two.waitFor("b with two viewers", has(twice))
	waitViewers(t, fx, "a", 0)
	one.scr.InjectKey(tcell.KeyDown, 0, tcell.ModAlt) // one looks at a
	one.waitFor("a with one viewer", has(once))
	two.waitFor("b with one viewer", has(once))
	for _, id := range []string{"a", "b"} {
		waitViewers(t, fx, id, 1)
	}
	two.scr.InjectKey(tcell.KeyDown, 0, tcell.ModAlt) // two joins one on a
	one.waitFor("a with two viewers", has(twice))
	two.waitFor("a with two viewers", has(twice))
	waitViewers(t, fx, "a", 2)
	waitViewers(t, fx, "b", 0)
}

// waitViewers polls the API's status of session id until it counts want
// viewers, within a deadline (the change is pushed to viewers, but the
// HTTP status has no wait).
func waitViewers(t *testing.T, fx *fixture, id string, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := fx.c.Status(fx.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.Viewers == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s has %d viewers, want %d", id, st.Viewers, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
