//go:build !e2e_only || e2e_web

package e2e

import (
	"slices"
	"testing"

	"albedo/wire"
)

// The list groups a session's forks under it: each fork right after its
// parent, indented one step further (a fork of a fork two), marked ↳ and
// "← parent" still; a fork whose parent the list does not hold (deleted)
// stays at the top level, as does a session that is no fork. A fork made
// while the page is open goes under its parent too.
func TestWebListGroupsForksUnderParents(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "gone", create: wire.SessionCreate{Title: "gone"}})
	fork := func(parent, title string) string {
		t.Helper()
		f, err := fx.c.Fork(fx.ctx, parent, wire.ForkRequest{At: 0, Title: title})
		if err != nil {
			t.Fatal(err)
		}
		return f.ID
	}
	orphan := fork("gone", "orphan")
	if err := fx.c.DeleteSession(fx.ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct{ id, title string }{{"root", "the root"}, {"other", "other"}} {
		if _, err := fx.c.CreateSession(fx.ctx, s.id, wire.SessionCreate{Title: s.title}); err != nil {
			t.Fatal(err)
		}
	}
	a := fork("root", "branch a")
	putInput(t, fx, "other", "news in other") // other: more recent than root and a
	b := fork(a, "branch b")

	p := startBrowser(t).open(ownerLink(t, fx.home, "root"))
	p.waitOpen("the root")
	type row struct {
		ID     string `json:"id"`
		Depth  string `json:"depth"`
		Indent int    `json:"indent"`
		Marks  string `json:"marks"`
	}
	rows := func() []row {
		return eval[[]row](p, `[...document.querySelectorAll('#sessions li')].map(li => ({id: li.dataset.session, depth: li.dataset.depth || '0',
			indent: parseInt(getComputedStyle(li.querySelector('button')).paddingLeft),
			marks: [li.querySelector('.fork')?.textContent, li.querySelector('.from')?.textContent].filter(Boolean).join(' ')}))`)
	}
	at := func(rs []row, id string) int { return slices.IndexFunc(rs, func(r row) bool { return r.ID == id }) }
	p.wait("five listed", `document.querySelectorAll('#sessions li').length === 5`)
	check := func(rs []row, family []string) {
		t.Helper()
		root := at(rs, "root")
		for i, id := range family {
			if at(rs, id) != root+i {
				t.Fatalf("the list is %+v: want %v in a row", rs, family)
			}
		}
	}
	rs := rows()
	check(rs, []string{"root", a, b})
	want := map[string]row{
		"root": {Depth: "0", Marks: ""}, a: {Depth: "1", Marks: "↳ ← the root"}, b: {Depth: "2", Marks: "↳ ← branch a"},
		"other": {Depth: "0", Marks: ""}, orphan: {Depth: "0", Marks: "↳"},
	}
	for id, w := range want {
		if r := rs[at(rs, id)]; r.Depth != w.Depth || r.Marks != w.Marks {
			t.Fatalf("%s is listed as %+v, want depth %s and marks %q", id, r, w.Depth, w.Marks)
		}
	}
	top := rs[at(rs, "root")].Indent
	if one, two := rs[at(rs, a)].Indent, rs[at(rs, b)].Indent; !(top < one && one < two) || rs[at(rs, "other")].Indent != top || rs[at(rs, orphan)].Indent != top {
		t.Fatalf("indents: %+v", rs)
	}

	// A fork made elsewhere, while the page is open, goes under its
	// parent, first of its forks: the newest.
	c := fork("root", "branch c")
	p.wait("six listed", `document.querySelectorAll('#sessions li').length === 6`)
	rs = rows()
	check(rs, []string{"root", c, a, b})
	if r := rs[at(rs, c)]; r.Depth != "1" || r.Marks != "↳ ← the root" {
		t.Fatalf("the new fork is listed as %+v", r)
	}
	if ex := p.exceptions(); len(ex) > 0 {
		t.Fatalf("the page threw: %v", ex)
	}
}
