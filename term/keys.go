package term

import (
	"strings"

	"github.com/gdamore/tcell/v2"
)

// keyEntry is one row of the key table: the keys as a person reads them,
// what they do in words, and the presses that do it. The help overlay shows
// the rows, the README's key table repeats them (keys_test.go compares the
// two), and Model.Key dispatches on their bindings.
type keyEntry struct {
	keys  string
	does  string
	binds []binding
}

// binding is one press an entry answers and the action it runs. The
// bindings of the whole table are disjoint (no press in any state matches
// two of them; keys_test.go checks), so their order never decides anything.
// when and run are called only by Model.Key, on the UI goroutine that owns
// the Model; the table itself is never written after init.
type binding struct {
	key  tcell.Key
	ch   rune              // the rune, when key is tcell.KeyRune
	alt  altRule           // Ctrl and Shift never matter
	when func(*Model) bool // nil: in every state
	run  func(*Model) []Cmd
}

// altRule says whether a binding wants Alt held.
type altRule int

const (
	altEither altRule = iota // with or without Alt
	altHeld                  // only with Alt
	altNot                   // only without Alt
)

// keyTable is every key the help and the README list. What it leaves to
// Model.Key's fallbacks is typing and the composer's line editing (Left,
// Right, Backspace, Delete, Ctrl-A/E/U, Home/End while writing), and
// leaving the sidebar by writing (Enter, Right or a rune): the keys any
// text field has, which the help does not spell out.
var keyTable = []keyEntry{
	{"Enter", "send; Alt-Enter: new line (a paste keeps its newlines)", []binding{
		{key: tcell.KeyEnter, alt: altNot, when: sending, run: (*Model).submit},
		{key: tcell.KeyEnter, alt: altNot, when: pasting, run: (*Model).newLine},
		{key: tcell.KeyEnter, alt: altHeld, when: inComposer, run: (*Model).newLine},
	}},
	{"Up / Down", "recall earlier inputs (empty composer); move in the sidebar", []binding{
		{key: tcell.KeyUp, alt: altNot, when: inComposer, run: (*Model).recallEarlier},
		{key: tcell.KeyDown, alt: altNot, when: inComposer, run: (*Model).recallLater},
		{key: tcell.KeyUp, alt: altNot, when: inSidebar, run: (*Model).prevSession},
		{key: tcell.KeyDown, alt: altNot, when: inSidebar, run: (*Model).nextSession},
	}},
	{"Tab", "sidebar ⇄ composer", []binding{
		{key: tcell.KeyTab, run: (*Model).switchPane},
		{key: tcell.KeyBacktab, run: (*Model).switchPane},
	}},
	{"Alt-Up / Down", "previous / next session from anywhere", []binding{
		{key: tcell.KeyUp, alt: altHeld, run: (*Model).prevSession},
		{key: tcell.KeyDown, alt: altHeld, run: (*Model).nextSession},
	}},
	{"Ctrl-N", "new session, composer ready", []binding{
		{key: tcell.KeyCtrlN, run: (*Model).newSession},
	}},
	{"PgUp / PgDn", "scroll a page; older history loads at the top", []binding{
		{key: tcell.KeyPgUp, run: (*Model).pageUp},
		{key: tcell.KeyPgDn, run: (*Model).pageDown},
	}},
	{"Home / End", "top / follow the end, when not writing", []binding{
		{key: tcell.KeyHome, when: notWriting, run: (*Model).toTop},
		{key: tcell.KeyEnd, when: notWriting, run: (*Model).toEnd},
	}},
	{"Esc, Ctrl-C", "interrupt the running turn", []binding{
		{key: tcell.KeyEscape, when: turnRunning, run: (*Model).interrupt},
		{key: tcell.KeyCtrlC, when: turnRunning, run: (*Model).interrupt},
		{key: tcell.KeyEscape, when: turnIdle, run: (*Model).clearNotice},
	}},
	{"Ctrl-Q", "quit; so does Ctrl-C twice when idle", []binding{
		{key: tcell.KeyCtrlQ, run: (*Model).quit},
		{key: tcell.KeyCtrlC, when: turnIdle, run: (*Model).quitOnSecond},
	}},
	{"r", "retry when the daemon is unavailable", []binding{
		{key: tcell.KeyRune, ch: 'r', when: retryable, run: (*Model).retry},
	}},
}

// The states bindings depend on.

func inComposer(m *Model) bool { return m.Pane == paneComposer }
func inSidebar(m *Model) bool  { return m.Pane == paneSidebar }
func sending(m *Model) bool    { return inComposer(m) && !m.pasting }
func pasting(m *Model) bool    { return inComposer(m) && m.pasting }

// notWriting: the keys that edit text in the composer mean something else
// when there is no text to edit.
func notWriting(m *Model) bool { return inSidebar(m) || len(m.Composer) == 0 }

func turnRunning(m *Model) bool {
	s := m.Focused()
	return s != nil && s.running()
}

func turnIdle(m *Model) bool { return !turnRunning(m) }

// retryable: r is a key to press only when it would not be typed.
func retryable(m *Model) bool { return m.Conn.Phase.WaitsForUser() && notWriting(m) }

// matches says whether ev, in m's state, is this binding's press.
func (b *binding) matches(m *Model, ev *tcell.EventKey) bool {
	if ev.Key() != b.key || b.key == tcell.KeyRune && ev.Rune() != b.ch {
		return false
	}
	alt := ev.Modifiers()&tcell.ModAlt != 0
	if b.alt == altHeld && !alt || b.alt == altNot && alt {
		return false
	}
	return b.when == nil || b.when(m)
}

// binding returns the table's binding for ev in m's state, or nil.
func (m *Model) binding(ev *tcell.EventKey) *binding {
	for i := range keyTable {
		for j := range keyTable[i].binds {
			if b := &keyTable[i].binds[j]; b.matches(m, ev) {
				return b
			}
		}
	}
	return nil
}

// helpKeyWidth is the cells the help gives the keys column; every key in
// the tables fits in it with two spaces to spare (keys_test.go checks).
const helpKeyWidth = 15

// helpLines is the help overlay's text: the key table, then the slash
// commands.
func helpLines() []string {
	row := func(keys, does string) string {
		return keys + strings.Repeat(" ", max(helpKeyWidth-width(keys), 2)) + does
	}
	out := []string{"albedo — keys (any key closes this help)", ""}
	for _, e := range keyTable {
		out = append(out, row(e.keys, e.does))
	}
	out = append(out, "")
	for _, c := range slashCommands {
		out = append(out, row(c.usage, c.does))
	}
	return out
}
