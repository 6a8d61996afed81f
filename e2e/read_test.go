//go:build !e2e_only || e2e_web

package e2e

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
	"github.com/google/uuid"

	"albedo/wire"
)

// A person with two terminals and a page: news in a session makes it
// unread on all three; opening it on one terminal marks it read, and the
// others' unread counts for it go to 0 at once, through the daemon's
// stored read marker and its read push.
func TestReadOnOneTerminalIsReadOnTheOther(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "news", create: wire.SessionCreate{Title: "news"}})
	if _, err := fx.c.CreateSession(fx.ctx, "quiet", wire.SessionCreate{Title: "quiet"}); err != nil {
		t.Fatal(err)
	}
	// Both open on quiet, the session most recently active.
	if _, err := fx.c.PutInput(fx.ctx, "quiet", uuid.Must(uuid.NewV7()).String(), "hello"); err != nil {
		t.Fatal(err)
	}
	waitTurnsClosed(t, fx.ctx, fx.c, "quiet", 1)
	one, two := startUI(t, fx.c, 100, 20), startUI(t, fx.c, 100, 20)
	for _, u := range []*ui{one, two} {
		u.waitFor("quiet open", func(s string) bool { return strings.Contains(s, "echo: hello") })
	}
	p := startBrowser(t).open(ownerLink(t, fx.home, "quiet"))
	p.waitOpen("quiet")
	if _, err := fx.c.PutInput(fx.ctx, "news", uuid.Must(uuid.NewV7()).String(), "something new"); err != nil {
		t.Fatal(err)
	}
	for _, u := range []*ui{one, two} {
		// The reply: the owner's own message, sent elsewhere, is read by them.
		u.waitFor("news's reply unread", func(s string) bool { return strings.Contains(s, "(1) now") })
	}
	p.wait("news's reply unread on the page", `document.querySelector('#sessions li[data-session="news"] .count')?.textContent === '1'`)
	// Terminal one goes to news (the session above quiet, now the newest).
	one.scr.InjectKey(tcell.KeyUp, 0, tcell.ModAlt)
	one.waitFor("news open on one", func(s string) bool { return strings.Contains(s, "echo: something new") })
	two.waitFor("news read on two", func(s string) bool { return strings.Contains(s, "news") && !strings.Contains(s, "(1)") })
	p.wait("news read on the page", `!document.querySelector('#sessions li[data-session="news"] .count')`)
}
