package term

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"

	"albedo/wire"
)

// Mentions in the composer. In a session where mentions mean something
// (it has participants, or answers only mentions), a name being typed
// after @ at a mention's place (wire.Mentions: the text's start, or
// after a character that is no name's) lists who it may become above
// the composer, as the slash menu lists commands. Tab completes it to
// "@name ": the one name that starts so, or the first of several, and
// Tab again goes through the others (Shift-Tab back), until anything
// else is typed.

// mentionCycle is a completion Tab goes through the names of: the one
// it last put in the composer, at rune at, ends at end (its space
// included).
type mentionCycle struct {
	at, end int
	names   []string
	sel     int
}

// nameRune is a rune a mentioned name holds (wire.Mentions' grammar),
// a fold's placeholder aside: it stands for a paste, not a name.
func nameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-' ||
		r >= utf8.RuneSelf && !isFold(r)
}

// mentionAt finds the mention being typed before the cursor: the rune
// index of its @ and the part of the name typed so far.
func (m *Model) mentionAt() (at int, typed string, ok bool) {
	i := m.Cursor
	for i > 0 && nameRune(m.Composer[i-1]) {
		i--
	}
	if i == 0 || m.Composer[i-1] != '@' || i >= 2 && nameRune(m.Composer[i-2]) {
		return 0, "", false // no @, or an e-mail address's
	}
	return i - 1, string(m.Composer[i:m.Cursor]), true
}

// cycling says whether Tab goes on through m.mention's names: the
// composer holds, at the cursor, what it put there last.
func (m *Model) cycling() bool {
	c := m.mention
	return c != nil && m.Cursor == c.end && c.end <= len(m.Composer) &&
		string(m.Composer[c.at:c.end]) == "@"+c.names[c.sel]+" "
}

// mentionOpen: Tab completes a mention. The slash menu comes first (a
// /command is no message), and a read-only view writes none.
func mentionOpen(m *Model) bool {
	s := m.Focused()
	if m.Pane != paneComposer || s == nil || m.ReadOnly || menuOpen(m) || modelsOpen(m) || !s.mentioning() {
		return false
	}
	if m.cycling() {
		return true
	}
	_, _, ok := m.mentionAt()
	return ok
}

// completionClosed: Tab is no completion's, so it changes pane.
func completionClosed(m *Model) bool { return menuClosed(m) && !mentionOpen(m) && !modelsOpen(m) }

// mentionMatches is who in s a name typed as typed may become, in
// s.mentionable's order: those whose name starts with it, in any case.
func (s *SessionView) mentionMatches(typed string) []string {
	return slices.DeleteFunc(s.mentionable(), func(n string) bool {
		return !strings.HasPrefix(strings.ToLower(n), strings.ToLower(typed))
	})
}

// mentionNext completes the mention typed, or goes on to the next name.
func (m *Model) mentionNext() []Cmd { return m.completeMention(1) }

// mentionPrev is mentionNext, backwards.
func (m *Model) mentionPrev() []Cmd { return m.completeMention(-1) }

func (m *Model) completeMention(step int) []Cmd {
	if c := m.mention; m.cycling() {
		c.sel = (c.sel + step + len(c.names)) % len(c.names)
		m.putMention(c.at, c.end)
		return nil
	}
	s := m.Focused()
	at, typed, _ := m.mentionAt()
	names := s.mentionMatches(typed)
	if len(names) == 0 {
		m.notify(true, "no one here is @"+typed+"…: "+strings.Join(atNames(s.mentionable()), " "))
		return nil
	}
	end := m.Cursor // the rest of a word the cursor is in goes too
	for end < len(m.Composer) && nameRune(m.Composer[end]) {
		end++
	}
	if end < len(m.Composer) && m.Composer[end] == ' ' {
		end++ // a space that follows serves as the mention's
	}
	m.mention = &mentionCycle{at: at, names: names}
	if step < 0 {
		m.mention.sel = len(names) - 1
	}
	m.putMention(at, end)
	if len(names) == 1 {
		m.mention = nil // nothing to go through: Tab changes pane again
	}
	return nil
}

// putMention replaces the composer's runes [from, to) with the name
// m.mention has chosen, as "@name ".
func (m *Model) putMention(from, to int) {
	c := m.mention
	text := []rune("@" + c.names[c.sel] + " ")
	m.Composer = slices.Replace(m.Composer, from, to, text...)
	m.Cursor = from + len(text)
	c.end = m.Cursor
}

func atNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "@" + n
	}
	return out
}

// drawMentions lists, above the composer, the names the mention being
// typed may become, each with what it is; the one Tab takes (or took)
// stands out.
func drawMentions(scr tcell.Screen, m *Model, l layout) {
	if !mentionOpen(m) || m.ShowHelp {
		return
	}
	s := m.Focused()
	names, sel := m.mentionChoices()
	rows := make([]string, len(names))
	for i, n := range names {
		what := "participant"
		switch {
		case strings.EqualFold(n, wire.MentionName(s.Provider)):
			what = "the session's provider"
		case slices.Contains(s.Participants, "bot:"+n):
			what = "participant, a bot"
		}
		rows[i] = "@" + n + strings.Repeat(" ", max(helpKeyWidth-width(n)-1, 2)) + what
	}
	drawAbove(scr, l, rows, sel)
}

// mentionChoices is what drawMentions lists, and which is chosen.
func (m *Model) mentionChoices() ([]string, int) {
	if m.cycling() {
		return m.mention.names, m.mention.sel
	}
	_, typed, _ := m.mentionAt()
	return m.Focused().mentionMatches(typed), 0
}
