package term

import (
	"strings"

	"github.com/gdamore/tcell/v2"
)

// keyEntry is one row of the key table: the keys as a person reads them,
// what they do in words, and the presses that do it. The help overlay shows
// the rows, docs/terminal.md's key table repeats them (keys_test.go
// compares the two), and Model.Key dispatches on their bindings.
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
	mods modRule           // Ctrl never matters
	when func(*Model) bool // nil: in every state
	run  func(*Model) []Cmd
}

// modRule says which of Alt and Shift a binding wants held.
type modRule int

const (
	modAny   modRule = iota // with or without Alt and Shift
	modAlt                  // Alt held
	modNoAlt                // Alt not held; Shift does not matter
	modShift                // Shift held, Alt not
	modPlain                // neither Alt nor Shift
)

// keyTable is every key the help and docs/terminal.md list. What it
// leaves to Model.Key's fallbacks is typing and the composer's line
// editing (Left, Right, Backspace, Delete, Ctrl-A/E/U, Home/End while
// writing), and leaving the sidebar by writing (Enter, Right or a rune):
// the keys any text field has, which the help does not spell out.
var keyTable = []keyEntry{
	{"Enter", "send; with no session open, make one and send in it", []binding{
		{key: tcell.KeyEnter, mods: modPlain, when: inComposer, run: (*Model).submit},
	}},
	{"Alt-Enter", "new line; so do Ctrl-J and Shift-Enter", []binding{
		{key: tcell.KeyEnter, mods: modAlt, when: inComposer, run: (*Model).newLine},
		{key: tcell.KeyEnter, mods: modShift, when: inComposer, run: (*Model).newLine},
		{key: tcell.KeyCtrlJ, when: inComposer, run: (*Model).newLine},
	}},
	{"Up / Down", "recall earlier inputs (empty composer); move in the sidebar", []binding{
		{key: tcell.KeyUp, mods: modNoAlt, when: inComposer, run: (*Model).recallEarlier},
		{key: tcell.KeyDown, mods: modNoAlt, when: inComposer, run: (*Model).recallLater},
		{key: tcell.KeyUp, mods: modNoAlt, when: inSidebar, run: (*Model).prevSession},
		{key: tcell.KeyDown, mods: modNoAlt, when: inSidebar, run: (*Model).nextSession},
	}},
	{"Tab", "sidebar ⇄ composer", []binding{
		{key: tcell.KeyTab, when: completionClosed, run: (*Model).switchPane},
		{key: tcell.KeyBacktab, when: completionClosed, run: (*Model).switchPane},
	}},
	{"/ then Tab", "list the commands; Tab completes, again: the next", []binding{
		{key: tcell.KeyTab, when: menuOpen, run: (*Model).completeNext},
		{key: tcell.KeyBacktab, when: menuOpen, run: (*Model).completePrev},
	}},
	{"/model then Tab", "complete a model of the provider's; again: the next", []binding{
		{key: tcell.KeyTab, when: modelsOpen, run: (*Model).nextModel},
		{key: tcell.KeyBacktab, when: modelsOpen, run: (*Model).prevModel},
	}},
	{"@ then Tab", "complete a name to mention; again: the next", []binding{
		{key: tcell.KeyTab, when: mentionOpen, run: (*Model).mentionNext},
		{key: tcell.KeyBacktab, when: mentionOpen, run: (*Model).mentionPrev},
	}},
	{"Alt-Up / Down", "previous / next session from anywhere", []binding{
		{key: tcell.KeyUp, mods: modAlt, run: (*Model).prevSession},
		{key: tcell.KeyDown, mods: modAlt, run: (*Model).nextSession},
	}},
	{"Ctrl-S", "show / hide the sidebar (hidden at first below 70 columns)", []binding{
		{key: tcell.KeyCtrlS, run: (*Model).toggleSidebar},
	}},
	{"Ctrl-G", "go to a session: type part of its title or id, Enter", []binding{
		{key: tcell.KeyCtrlG, run: (*Model).openFilter},
	}},
	{"Ctrl-F", "search (older history too): ↑/Enter older, ↓ newer, Esc", []binding{
		{key: tcell.KeyCtrlF, run: (*Model).openSearch},
	}},
	{"Ctrl-Y", "select a message or call: ↑↓, Enter copies, c its code", []binding{
		{key: tcell.KeyCtrlY, run: (*Model).openPick},
	}},
	{"Ctrl-O", "unfold a paste; else open a file here; else long tool calls", []binding{
		{key: tcell.KeyCtrlO, when: inComposer, run: (*Model).unfold},
		{key: tcell.KeyCtrlO, when: inSidebar, run: (*Model).filesOrTools},
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
	{"Alt-Y / A / N", "a tool call waiting: allow / always here / deny", []binding{
		{key: tcell.KeyRune, ch: 'y', mods: modAlt, when: canDecide, run: (*Model).allowCall},
		{key: tcell.KeyRune, ch: 'a', mods: modAlt, when: canDecide, run: (*Model).allowCallSession},
		{key: tcell.KeyRune, ch: 'n', mods: modAlt, when: canDecide, run: (*Model).denyCall},
	}},
	{"Ctrl-Q", "quit; so does Ctrl-C twice when idle", []binding{
		{key: tcell.KeyCtrlQ, run: (*Model).quit},
		{key: tcell.KeyCtrlC, when: turnIdle, run: (*Model).quitOnSecond},
	}},
	{"Ctrl-T", "show / hide the time of each message", []binding{
		{key: tcell.KeyCtrlT, run: func(m *Model) []Cmd { m.Times = !m.Times; return nil }},
	}},
	{"Ctrl-L", "redraw the screen", []binding{
		{key: tcell.KeyCtrlL, run: func(*Model) []Cmd { return []Cmd{cmdRedraw{}} }},
	}},
	{"r", "start the daemon again: stopped, failed or gave up", []binding{
		{key: tcell.KeyRune, ch: 'r', when: retryable, run: (*Model).retry},
	}},
}

// The states bindings depend on.

func inComposer(m *Model) bool { return m.Pane == paneComposer }
func inSidebar(m *Model) bool  { return m.Pane == paneSidebar }

// notWriting: the keys that edit text in the composer mean something else
// when there is no text to edit.
func notWriting(m *Model) bool { return inSidebar(m) || len(m.Composer) == 0 }

// turnRunning: a turn runs that Esc and Ctrl-C can interrupt (a viewer
// cannot: for it they are the idle keys).
func turnRunning(m *Model) bool {
	s := m.Focused()
	return s != nil && s.running() && !m.ReadOnly
}

func turnIdle(m *Model) bool { return !turnRunning(m) }

// retryable: r is a key to press only when it would not be typed, and
// not for a token refused for good.
func retryable(m *Model) bool { return m.Conn.Phase.WaitsForUser() && !m.refused() && notWriting(m) }

// matches says whether ev, in m's state, is this binding's press.
func (b *binding) matches(m *Model, ev *tcell.EventKey) bool {
	if ev.Key() != b.key || b.key == tcell.KeyRune && ev.Rune() != b.ch {
		return false
	}
	alt, shift := ev.Modifiers()&tcell.ModAlt != 0, ev.Modifiers()&tcell.ModShift != 0
	switch b.mods {
	case modAlt:
		if !alt {
			return false
		}
	case modNoAlt:
		if alt {
			return false
		}
	case modShift:
		if alt || !shift {
			return false
		}
	case modPlain:
		if alt || shift {
			return false
		}
	}
	return b.when == nil || b.when(m)
}

// canonical rewrites the presses that terminals spell more than one way
// into the one spelling the key table binds. A terminal without a modern
// keyboard protocol (tmux, by default) sends Alt-Enter as ESC CR and
// Alt-Ctrl-J as ESC LF; tcell reads ESC before a control character as
// Alt + Ctrl + its letter, a rune ('m' for CR), which the composer would
// otherwise type. Here it is the control key again, with Alt: CR and TAB
// as Enter and Tab, the others as tcell's Ctrl keys.
func canonical(ev *tcell.EventKey) *tcell.EventKey {
	mod := ev.Modifiers()
	if ev.Key() == tcell.KeyRune && mod&tcell.ModCtrl != 0 && mod&tcell.ModAlt != 0 {
		switch r := ev.Rune(); {
		case r == 'm':
			return tcell.NewEventKey(tcell.KeyEnter, 0, mod&^tcell.ModCtrl)
		case r == 'i':
			return tcell.NewEventKey(tcell.KeyTab, 0, mod&^tcell.ModCtrl)
		case r >= 'a' && r <= 'z':
			return tcell.NewEventKey(tcell.KeyCtrlA+tcell.Key(r-'a'), 0, mod)
		}
	}
	return ev
}

// escThenRune says whether ev is ESC followed by a printable key rather
// than a key pressed with Alt: a rune with Alt (and not Ctrl) that no
// binding takes with Alt. A terminal without a modern keyboard protocol
// sends Alt-x as ESC x, and tcell reads ESC, or ESC ESC, followed by any
// key as that key with Alt; ESC ESC waits for the next key however late it
// comes, so two quick Escs and then "/new" would otherwise lose the "/".
func (m *Model) escThenRune(ev *tcell.EventKey) (rune, bool) {
	mod := ev.Modifiers()
	if ev.Key() != tcell.KeyRune || mod&tcell.ModAlt == 0 || mod&tcell.ModCtrl != 0 || ev.Rune() < ' ' {
		return 0, false
	}
	if m.pasting || altBound(ev.Rune()) || m.binding(ev) != nil {
		return 0, false
	}
	return ev.Rune(), true
}

// altBound says whether the key table binds r with Alt held (Alt-Y, …):
// such a press is never read as ESC and the key, even in a state where
// the binding does nothing.
func altBound(r rune) bool {
	for _, e := range keyTable {
		for _, b := range e.binds {
			if b.key == tcell.KeyRune && b.ch == r && b.mods == modAlt {
				return true
			}
		}
	}
	return false
}

// escThen is Esc and then the key r, for a press escThenRune found. The
// Esc does what it does alone (closes what is open, clears a notice) but
// interrupt a turn: a person who held Alt did not mean to interrupt.
func (m *Model) escThen(r rune) []Cmd {
	var cmds []Cmd
	if !m.escInterrupts() {
		cmds = m.Key(tcell.NewEventKey(tcell.KeyEscape, 0, tcell.ModNone))
	}
	return append(cmds, m.Key(tcell.NewEventKey(tcell.KeyRune, r, tcell.ModNone))...)
}

// escInterrupts says whether Esc would interrupt the running turn: no
// overlay or line is open to take it first.
func (m *Model) escInterrupts() bool {
	open := m.ShowHelp || m.asking != nil || m.filter != nil || m.search != nil || m.pick != nil || m.hits != nil || m.files != nil
	return !open && turnRunning(m)
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
const helpKeyWidth = 17

// helpLines is the help overlay's text: the key table, then the slash
// commands.
func helpLines() []string {
	row := func(keys, does string) string {
		return keys + strings.Repeat(" ", max(helpKeyWidth-width(keys), 2)) + does
	}
	var out []string
	for _, e := range keyTable {
		out = append(out, row(e.keys, e.does))
	}
	out = append(out, "")
	for _, c := range slashCommands {
		out = append(out, row(c.usage, c.does))
	}
	return out
}

// helpKey is a key while the help shows: Up, Down, PgUp and PgDn scroll a
// help taller than the screen, any other key closes it.
func (m *Model) helpKey(ev *tcell.EventKey) {
	page := max(m.Height-3, 1)
	switch ev.Key() {
	case tcell.KeyUp:
		m.helpTop--
	case tcell.KeyDown:
		m.helpTop++
	case tcell.KeyPgUp:
		m.helpTop -= page
	case tcell.KeyPgDn:
		m.helpTop += page
	default:
		m.ShowHelp, m.helpTop = false, 0
		return
	}
	m.helpTop = min(max(m.helpTop, 0), max(len(helpLines())-page, 0))
}
