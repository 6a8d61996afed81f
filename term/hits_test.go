package term

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"albedo/wire"
)

// /search TEXT asks the daemon, shows its hits in a box (session, author,
// the match highlighted), ↑↓ choose, and Enter opens the chosen hit's
// session with its message selected, reading older history a page at a
// time when the message is older than what is loaded.
func TestSearchAcrossSessionsOpensTheHit(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Resize(120, 24)
	b := m.Sessions[1]
	b.More = true
	for off := int64(101); off <= 110; off++ {
		b.Events = append(b.Events, msg(off, "user", "ann", fmt.Sprint("note ", off)))
	}
	cmds := runLine(m, "/search kettle")
	if len(cmds) != 1 || cmds[0] != (cmdSearch{Query: "kettle"}) || m.hits == nil {
		t.Fatalf("/search: %#v", cmds)
	}
	if r := screen(t, m); !contains(r, "search: kettle · searching…") {
		t.Fatalf("no box while searching:\n%s", strings.Join(r, "\n"))
	}
	m.Result(resSearch{Query: "kettle", Results: wire.SearchResults{Results: []wire.SearchResult{
		{Session: "s-aaaaaaaa", Title: "planning", Offset: 2, Type: wire.EventMessage, Role: wire.RoleAssistant, Author: "m1", Text: "the «kettle» boils", At: t0},
		{Session: "s-bbbbbbbb", Title: "notes", Offset: 42, Type: wire.EventMessage, Role: wire.RoleUser, Author: "ann", Text: "fix the «kettle»", At: t0},
	}}})
	scr := drawn(t, m)
	r := rows(scr)
	if !contains(r, "search: kettle · 2 · ↑↓ Enter opens · Esc") || !contains(r, "notes · ann · ") || !contains(r, "fix the kettle") {
		t.Fatalf("the box:\n%s", strings.Join(r, "\n"))
	}
	if st := styleAt(t, scr, "kettle boils"); st != stMatch {
		t.Fatalf("the match is not highlighted: %v", st)
	}
	m.Key(key(tcell.KeyDown, 0, 0))
	cmds = m.Key(key(tcell.KeyEnter, 0, 0))
	if m.Focused() != b || len(cmds) != 1 || cmds[0] != (cmdLoadOlder{Session: b.ID, Before: 101}) {
		t.Fatalf("Enter on an old hit: focus %s, %#v", m.Focused().ID, cmds)
	}
	page := func(from, to int64) wire.Page {
		var p wire.Page
		for off := from; off <= to; off++ {
			ev := msg(off, "user", "ann", fmt.Sprint("note ", off))
			if off == 42 {
				ev.Text = "fix the kettle"
			}
			p.Events = append(p.Events, ev)
		}
		p.More = from > 1
		return p
	}
	if cmds := m.Result(resOlder{Session: b.ID, Page: page(51, 100)}); len(cmds) != 1 || cmds[0] != (cmdLoadOlder{Session: b.ID, Before: 51}) {
		t.Fatalf("after a page without it: %#v", cmds)
	}
	if cmds := m.Result(resOlder{Session: b.ID, Page: page(1, 50)}); cmds != nil {
		t.Fatalf("after the page with it: %#v", cmds)
	}
	if m.pick == nil || b.Events[m.pick.event].Offset != 42 || m.jump != nil {
		t.Fatalf("the hit is not selected: %+v", m.pick)
	}
	if r := screen(t, m); !contains(r, "fix the kettle") {
		t.Fatalf("the hit is not in view:\n%s", strings.Join(r, "\n"))
	}
	// Esc leaves the selection; a search that finds nothing says so.
	m.Key(key(tcell.KeyEscape, 0, 0))
	runLine(m, "/search nothing")
	m.Result(resSearch{Query: "nothing", Results: wire.SearchResults{Results: []wire.SearchResult{}}})
	if m.hits != nil || !strings.Contains(m.Notice, "nothing found") {
		t.Fatalf("nothing found: %q", m.Notice)
	}
}

// A hit in a session whose history has not come yet (a search just after
// the client started) is opened as that history comes.
func TestSearchHitLandsAsHistoryComes(t *testing.T) {
	t.Parallel()
	m := demo()
	b := m.Sessions[1]
	m.hits = &hits{query: "q", results: []wire.SearchResult{{Session: b.ID, Offset: 2}}}
	if cmds := m.Key(key(tcell.KeyEnter, 0, 0)); cmds != nil || m.jump == nil || m.Focused() != b {
		t.Fatalf("Enter: %#v, jump %+v", cmds, m.jump)
	}
	m.Item(b.ID, itemReset(3))
	for off := int64(1); off <= 3; off++ {
		m.Item(b.ID, itemEvent(msg(off, "user", "ann", fmt.Sprint("note ", off))))
		if off < 3 && m.pick != nil {
			t.Fatalf("landed at %d, before the history came", off)
		}
	}
	if m.pick == nil || b.Events[m.pick.event].Offset != 2 || m.jump != nil {
		t.Fatalf("not landed: pick %+v jump %+v", m.pick, m.jump)
	}
}

// A hit on a tool's output lands on its call's block, where the output
// is drawn.
func TestSearchHitOnAToolResultLandsOnItsCall(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Resize(120, 24)
	b := m.Sessions[1]
	call := askCall(101, "c1", "bot:w/forecast")
	call.Policy = wire.PolicyAllow
	m.Item(b.ID, itemEvent(call))
	m.Item(b.ID, itemEvent(toolResult(102, "c1", wire.ToolCompleted, "snow in the kettle", "")))
	runLine(m, "/search kettle")
	m.Result(resSearch{Query: "kettle", Results: wire.SearchResults{Results: []wire.SearchResult{
		{Session: b.ID, Title: "notes", Offset: 102, Type: wire.EventToolResult, Text: "snow in the «kettle»", At: t0},
	}}})
	if cmds := m.Key(key(tcell.KeyEnter, 0, 0)); m.Focused() != b || cmds != nil {
		t.Fatalf("Enter: focus %s, %#v", m.Focused().ID, cmds)
	}
	if m.pick == nil || b.Events[m.pick.event].Offset != 101 {
		t.Fatalf("the call is not selected: %+v", m.pick)
	}
	if r := screen(t, m); !contains(r, "bot:w/forecast") || !contains(r, "snow in the kettle") {
		t.Fatalf("the call is not in view:\n%s", strings.Join(r, "\n"))
	}
}
