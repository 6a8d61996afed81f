package term

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/wire"
)

// row is one line of a key table: the keys (or a command as typed) and what
// they do.
type row struct{ keys, does string }

func (r row) String() string { return "| " + r.keys + " | " + r.does + " |" }

// tableRows is what the help lists: the key table, then the slash commands.
func tableRows() []row {
	var out []row
	for _, e := range keyTable {
		out = append(out, row{e.keys, e.does})
	}
	for _, c := range slashCommands {
		out = append(out, row{c.usage, c.does})
	}
	return out
}

// keyDoc is the page that documents the terminal's keys, from this
// package's directory.
const keyDoc = "../docs/terminal.md"

// docKeyRows returns the rows of the table headed "| key | does |" in
// docs/terminal.md, with code-span backticks taken out: the page sets
// commands in code, the help cannot.
func docKeyRows(t *testing.T, doc string) []row {
	t.Helper()
	lines := strings.Split(doc, "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == "| key | does |" })
	if i < 0 || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "| ---") {
		t.Fatal(`docs/terminal.md has no table headed "| key | does |"`)
	}
	clean := func(s string) string { return strings.TrimSpace(strings.ReplaceAll(s, "`", "")) }
	var out []row
	for _, l := range lines[i+2:] {
		if !strings.HasPrefix(l, "|") {
			break
		}
		// A pipe inside a cell is written \| (GitHub's tables).
		l = strings.ReplaceAll(l, `\|`, "\x00")
		cells := strings.Split(strings.Trim(strings.TrimSpace(l), "|"), "|")
		for i := range cells {
			cells[i] = strings.ReplaceAll(cells[i], "\x00", "|")
		}
		if len(cells) != 2 {
			t.Fatalf("docs/terminal.md key table row %q has %d cells, want 2", l, len(cells))
		}
		out = append(out, row{clean(cells[0]), clean(cells[1])})
	}
	return out
}

// diffRows names every way the rows of docs/terminal.md disagree with the
// table's: a row missing on either side, a row whose words differ, another
// order.
func diffRows(doc, table []row) []string {
	index := func(rows []row) map[string]string {
		m := map[string]string{}
		for _, r := range rows {
			m[r.keys] = r.does
		}
		return m
	}
	inDoc, inTable := index(doc), index(table)
	var diffs []string
	for _, r := range table {
		does, ok := inDoc[r.keys]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("docs/terminal.md lacks the row %s", r))
		case does != r.does:
			diffs = append(diffs, fmt.Sprintf("%s: docs/terminal.md says %q, the table %q", r.keys, does, r.does))
		}
	}
	for _, r := range doc {
		if _, ok := inTable[r.keys]; !ok {
			diffs = append(diffs, fmt.Sprintf("docs/terminal.md has the row %s, which the table lacks", r))
		}
	}
	keys := func(rows []row) (out []string) {
		for _, r := range rows {
			out = append(out, r.keys)
		}
		return out
	}
	if len(diffs) == 0 && !slices.Equal(keys(doc), keys(table)) {
		diffs = append(diffs, fmt.Sprintf("docs/terminal.md lists the rows as %q, the table as %q", keys(doc), keys(table)))
	}
	return diffs
}

// The key table of docs/terminal.md says what the help says, row for row.
func TestDocKeyTable(t *testing.T) {
	b, err := os.ReadFile(keyDoc)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffRows(docKeyRows(t, string(b)), tableRows()) {
		t.Error(d)
	}
}

// The comparison above fails, naming the difference, for each way the two
// can drift apart.
func TestDiffRows(t *testing.T) {
	table := []row{{"Ctrl-N", "new session"}, {"Ctrl-Q", "quit"}}
	cases := []struct {
		name string
		doc  []row
		want string // in the only difference named; "" for none
	}{
		{"same", []row{{"Ctrl-N", "new session"}, {"Ctrl-Q", "quit"}}, ""},
		{"missing", []row{{"Ctrl-N", "new session"}}, "docs/terminal.md lacks the row | Ctrl-Q | quit |"},
		{"extra", append(slices.Clone(table), row{"F1", "help"}), "docs/terminal.md has the row | F1 | help |, which the table lacks"},
		{"words", []row{{"Ctrl-N", "new session"}, {"Ctrl-Q", "leave"}}, `Ctrl-Q: docs/terminal.md says "leave", the table "quit"`},
		{"order", []row{{"Ctrl-Q", "quit"}, {"Ctrl-N", "new session"}}, "docs/terminal.md lists the rows as"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			diffs := diffRows(tc.doc, table)
			if tc.want == "" && len(diffs) != 0 || tc.want != "" && (len(diffs) != 1 || !strings.Contains(diffs[0], tc.want)) {
				t.Fatalf("diffs %q, want one containing %q", diffs, tc.want)
			}
		})
	}
}

// The help overlay shows every row, keys and words on one line, on an
// 80x24 terminal: those below its box after scrolling with Down.
func TestHelpListsEveryEntry(t *testing.T) {
	m := NewModel(80, 24)
	m.ShowHelp = true
	var seen []string
	for range len(tableRows()) {
		seen = append(seen, screen(t, m)...)
		m.Key(key(tcell.KeyDown, 0, 0))
	}
	for _, want := range tableRows() {
		if width(want.keys) > helpKeyWidth-2 {
			t.Errorf("%q is wider than the help's keys column (%d cells)", want.keys, helpKeyWidth-2)
		}
		line := want.keys + strings.Repeat(" ", helpKeyWidth-width(want.keys)) + want.does
		if !contains(seen, line) {
			t.Errorf("help lacks %q:\n%s", line, strings.Join(seen, "\n"))
		}
	}
	if !m.ShowHelp {
		t.Fatal("scrolling closed the help")
	}
	// It is a framed box: the transcript does not show through.
	if r := screen(t, m); !contains(r, "┌─ albedo: keys and commands") || !contains(r, "└───") {
		t.Fatalf("the help has no frame:\n%s", strings.Join(r, "\n"))
	}
	m.Key(key(tcell.KeyRune, 'x', 0))
	if m.ShowHelp || len(m.Composer) != 0 {
		t.Fatalf("a key other than scrolling did not just close the help: composer %q", string(m.Composer))
	}
}

// No press, in any state, matches two bindings, so the table's order never
// matters; and every binding answers some press in some state.
func TestKeyBindingsDisjoint(t *testing.T) {
	type press struct {
		key tcell.Key
		ch  rune
	}
	var presses []press
	for _, e := range keyTable {
		for _, b := range e.binds {
			if p := (press{b.key, b.ch}); !slices.Contains(presses, p) {
				presses = append(presses, p)
			}
		}
	}
	used := map[*binding]bool{}
	for _, st := range keyStates() {
		for _, p := range presses {
			for _, mod := range []tcell.ModMask{0, tcell.ModAlt, tcell.ModCtrl, tcell.ModShift, tcell.ModAlt | tcell.ModCtrl, tcell.ModAlt | tcell.ModShift} {
				ev := tcell.NewEventKey(p.key, p.ch, mod)
				var hits []string
				for i := range keyTable {
					for j := range keyTable[i].binds {
						if b := &keyTable[i].binds[j]; b.matches(st.m, ev) {
							used[b] = true
							hits = append(hits, fmt.Sprintf("%s #%d", keyTable[i].keys, j))
						}
					}
				}
				if len(hits) > 1 {
					t.Errorf("%s, %s: bindings %q all match", ev.Name(), st.name, hits)
				}
			}
		}
	}
	for i := range keyTable {
		for j := range keyTable[i].binds {
			if !used[&keyTable[i].binds[j]] {
				t.Errorf("%s #%d matches no press in any state", keyTable[i].keys, j)
			}
		}
	}
}

type keyState struct {
	name string
	m    *Model
}

// keyStates is every combination of the states bindings depend on: the
// pane, an empty composer, a /command begun (the slash menu), a mention
// begun in a session with participants, a running turn, one waiting for
// a decision, a paste, the connection.
func keyStates() []keyState {
	var out []keyState
	for _, sidebar := range []bool{false, true} {
		for _, text := range []string{"", "draft", "/t", "hi @p", "/model @p"} {
			for _, phase := range []wire.Phase{wire.PhaseIdle, wire.PhaseRunning, wire.PhaseApproval} {
				for _, paste := range []bool{false, true} {
					for _, conn := range []client.Phase{client.Connected, client.Unavailable} {
						m := demo()
						m.Pane = map[bool]pane{false: paneComposer, true: paneSidebar}[sidebar]
						m.setComposer(text)
						m.Sessions[0].Participants = []string{"pat"}
						m.Sessions[0].Phase = phase
						if phase == wire.PhaseApproval {
							m.Sessions[0].Access = wire.AccessCreator
							m.Item(m.Sessions[0].ID, itemEvent(askCall(3, "c1", "bot:b/t")))
						}
						m.pasting = paste
						m.Conn.Phase = conn
						name := fmt.Sprintf("sidebar=%v composer=%q phase=%v pasting=%v conn=%v", sidebar, text, phase, paste, conn)
						out = append(out, keyState{name, m})
					}
				}
			}
		}
	}
	return out
}
