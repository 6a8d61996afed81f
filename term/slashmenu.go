package term

import (
	"strings"

	"github.com/gdamore/tcell/v2"
)

// The slash menu: while the composer holds the start of a /command (a
// slash and letters, no space yet), the commands it may become are listed
// above the composer, filtered as more is typed, as chat tools do. Tab
// completes the one chosen (the first, or as far as they all agree) and,
// pressed again, chooses the next; Shift-Tab the one before. Enter on a
// start that only one command has runs that command.

// menuRows is the most commands the menu lists at once.
const menuRows = 8

// slashPrefix is the composer's text if it is the start of a /command
// being typed, else "".
func (m *Model) slashPrefix() string {
	if m.Pane != paneComposer || len(m.Composer) == 0 || m.Composer[0] != '/' || m.Cursor != len(m.Composer) {
		return ""
	}
	s := string(m.Composer)
	if strings.ContainsAny(s, " \t\n") {
		return ""
	}
	return s
}

// menu is the commands the composer's text may become, in the help's
// order; while Tab goes through them, those of what was typed before.
func (m *Model) menu() []slashCommand {
	p := m.slashPrefix()
	if p == "" {
		return nil
	}
	if m.menuFrom != "" && strings.HasPrefix(p, m.menuFrom) {
		p = m.menuFrom
	}
	return m.menuOf(p)
}

// name is the command's first word: /title of "/title TEXT".
func (c slashCommand) name() string {
	n, _, _ := strings.Cut(c.usage, " ")
	return n
}

// menuOpen: the composer holds the start of a command some command has.
func menuOpen(m *Model) bool { return len(m.menu()) > 0 }

func menuClosed(m *Model) bool { return !menuOpen(m) }

// completeNext completes the composer's command: to the one only match,
// else as far as the matches agree, else to the next match in turn.
func (m *Model) completeNext() []Cmd { return m.complete(1) }

// completePrev is completeNext, backwards.
func (m *Model) completePrev() []Cmd { return m.complete(-1) }

func (m *Model) complete(step int) []Cmd {
	typed := string(m.Composer)
	all := m.menuOf(m.menuFrom)
	cycling := m.menuFrom != "" && m.menuSel >= 0 && m.menuSel < len(all) && all[m.menuSel].name() == typed
	if !cycling {
		ms := m.menuOf(typed)
		if len(ms) == 1 {
			m.setCommand(ms[0])
			return nil
		}
		if p := commonPrefix(ms); len(p) > len(typed) {
			m.setComposer(p)
			return nil
		}
		// As far as they agree already: go through them, keeping the
		// filter of what was typed.
		m.menuFrom, m.menuSel, all = typed, -1, ms
		if step < 0 {
			m.menuSel = 0
		}
	}
	m.menuSel = (m.menuSel + step + len(all)) % len(all)
	m.setComposer(all[m.menuSel].name())
	return nil
}

// menuOf is the commands starting with p that this person may run
// (offered).
func (m *Model) menuOf(p string) []slashCommand {
	var out []slashCommand
	for _, c := range slashCommands {
		if strings.HasPrefix(c.name(), p) && m.offered(c) {
			out = append(out, c)
		}
	}
	return out
}

// setCommand puts c in the composer, with a space when it takes more.
func (m *Model) setCommand(c slashCommand) {
	name := c.name()
	if strings.Contains(c.usage, " ") {
		name += " "
	}
	m.setComposer(name)
}

func commonPrefix(cs []slashCommand) string {
	if len(cs) == 0 {
		return ""
	}
	p := cs[0].name()
	for _, c := range cs[1:] {
		n := c.name()
		for !strings.HasPrefix(n, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

// drawMenu lists the menu's commands above the composer, over the end of
// the transcript; the one Tab would take stands out.
func drawMenu(scr tcell.Screen, m *Model, l layout) {
	ms := m.menu()
	if len(ms) == 0 || m.ShowHelp {
		return
	}
	sel := 0
	rows := make([]string, len(ms))
	for i, c := range ms {
		if c.name() == string(m.Composer) {
			sel = i
		}
		rows[i] = c.usage + strings.Repeat(" ", max(helpKeyWidth-width(c.usage), 2)) + c.does
	}
	drawAbove(scr, l, rows, sel)
}

// drawAbove draws a list of choices above the composer (the slash menu,
// a mention's names): at most menuRows of them, the chosen one in view
// and standing out.
func drawAbove(scr tcell.Screen, l layout, list []string, sel int) {
	if len(list) == 0 || l.mainW < 10 {
		return
	}
	bottom := l.composerY
	if l.sepY >= 0 {
		bottom = l.sepY
	}
	rows := min(len(list), menuRows, bottom)
	first := max(sel-rows+1, 0)
	for i := range rows {
		st := stSelDim
		if first+i == sel {
			st = stSelected
		}
		y := bottom - rows + i
		fill(scr, l.mainX, y, l.mainW, st)
		put(scr, l.mainX+1, y, l.mainW-1, list[first+i], st)
	}
}
