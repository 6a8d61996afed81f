//go:build !e2e_only || e2e_web

package e2e

import (
	"testing"

	"github.com/google/uuid"

	"albedo/wire"
)

// A fork shows as one in the session list: a mark, and its parent's
// title, from the feed; a session that is no fork has neither.
func TestWebListMarksForks(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "root", create: wire.SessionCreate{Title: "the root"}})
	if _, err := fx.c.PutInput(fx.ctx, "root", uuid.NewString(), "a question"); err != nil {
		t.Fatal(err)
	}
	waitTurnsClosed(t, fx.ctx, fx.c, "root", 1)
	f, err := fx.c.Fork(fx.ctx, "root", wire.ForkRequest{At: 1, Title: "a branch"})
	if err != nil {
		t.Fatal(err)
	}
	p := startBrowser(t).open(ownerLink(t, fx.home, "root"))
	p.waitOpen("the root")
	li := `document.querySelector('#sessions li[data-session=` + jsString(f.ID) + `]')`
	p.wait("the fork, marked, with its parent's title", li+`?.querySelector('.fork')?.textContent === '↳' &&
		`+li+`.querySelector('.from')?.textContent === '← the root' && `+li+`.querySelector('.name').textContent === 'a branch'`)
	if eval[bool](p, `!!document.querySelector('#sessions li[data-session=root] .fork, #sessions li[data-session=root] .from')`) {
		t.Fatal("the root is marked as a fork")
	}
}
