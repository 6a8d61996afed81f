package term

import (
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/uniseg"
)

// wrap breaks text into lines of at most width display cells, at spaces
// where it can and inside a word where it must. It counts display width by
// grapheme cluster, so CJK characters (2 cells) and emoji are measured as
// the terminal draws them. Newlines in text are kept; each line is shown
// as displayable does.
func wrap(text string, width int) []string {
	if width < 1 {
		width = 1
	}
	var out []string
	for para := range strings.SplitSeq(text, "\n") {
		out = append(out, wrapLine(displayable(para), width)...)
	}
	return out
}

// displayable is one line of text as albedo draws it, so that every
// terminal puts each cell where tcell counts it:
//   - a tab goes to the next stop of 4 cells;
//   - other control characters show as their Unicode pictures (␛ for
//     ESC), never reaching the terminal raw;
//   - a zero-width joiner and the emoji variation selector are dropped.
//     Terminals disagree about how wide a joined sequence is (a family
//     emoji is 2 cells in some, 6 or 8 in tmux), and a line drawn wider
//     than counted garbles everything after it; the people of a family
//     shown side by side take the cells everyone agrees on.
func displayable(s string) string {
	if !needsCleaning(s) {
		return s
	}
	var b strings.Builder
	col := 0
	state := -1
	for rest := s; rest != ""; {
		var cl string
		var w int
		cl, rest, w, state = nextCluster(rest, state)
		switch {
		case cl == "\t":
			n := tabStop - col%tabStop
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		case len(cl) == 1 && (cl[0] < 0x20 || cl[0] == 0x7f):
			cl, w = string(controlPicture(rune(cl[0]))), 1
		case strings.Contains(cl, zwj) || strings.Contains(cl, vs16):
			// A cluster cleaned of its joiners may be several now.
			cl = strings.NewReplacer(zwj, "", vs16, "").Replace(cl)
			w = uniseg.StringWidth(cl)
		}
		b.WriteString(cl)
		col += w
	}
	return b.String()
}

const (
	tabStop = 4
	zwj     = "\u200d"
	vs16    = "\ufe0f"
)

func needsCleaning(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return true
		}
	}
	return strings.Contains(s, zwj) || strings.Contains(s, vs16)
}

// controlPicture is the visible stand-in for a C0 control or DEL.
func controlPicture(c rune) rune {
	if c == 0x7f {
		return '\u2421'
	}
	return '\u2400' + c
}

func wrapLine(s string, width int) []string {
	if s == "" {
		return []string{""}
	}
	var lines []string
	var line strings.Builder
	lineW := 0
	lastSpace, wAtSpace := -1, 0 // byte index in line after the last space, and width there
	state := -1
	for rest := s; rest != ""; {
		var cl string
		var w int
		cl, rest, w, state = nextCluster(rest, state)
		broke := false
		// A loop, not an if: the rest of a word carried to the next line
		// may itself leave no room for this cluster (a wide one).
		for lineW+w > width && lineW > 0 {
			cur := line.String()
			if lastSpace > 0 && cl != " " {
				// Break after the last space; carry the rest of the word.
				lines = append(lines, strings.TrimRight(cur[:lastSpace], " "))
				rest := cur[lastSpace:]
				line.Reset()
				line.WriteString(rest)
				lineW -= wAtSpace
			} else {
				lines = append(lines, strings.TrimRight(cur, " "))
				line.Reset()
				lineW = 0
			}
			lastSpace, broke = -1, true
		}
		if broke && cl == " " {
			continue // a space at the break is the break
		}
		line.WriteString(cl)
		lineW += w
		if cl == " " {
			lastSpace, wAtSpace = line.Len(), lineW
		}
	}
	lines = append(lines, line.String())
	return lines
}

// nextCluster splits the first grapheme cluster off s and says how many
// cells it takes; state is uniseg's, -1 at the start. Printable ASCII not
// followed by a combining character is its own one-cell cluster: the
// common case, and many times faster than asking uniseg.
func nextCluster(s string, state int) (cluster, rest string, width, newState int) {
	if c := s[0]; c >= 0x20 && c < 0x7f && (len(s) == 1 || s[1] < 0x80) {
		return s[:1], s[1:], 1, -1
	}
	return uniseg.FirstGraphemeClusterInString(s, state)
}

// width is the display width of s, as displayable shows it, in terminal
// cells.
func width(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return uniseg.StringWidth(displayable(s))
		}
	}
	return len(s)
}

// truncate cuts s, shown as displayable, to at most w cells, ending with
// "…" when it cut. A newline shows as a space.
func truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	s = displayable(strings.ReplaceAll(s, "\n", " "))
	if width(s) <= w {
		return s
	}
	var b strings.Builder
	used := 0
	g := uniseg.NewGraphemes(s)
	for g.Next() {
		if used+g.Width() > w-1 {
			break
		}
		b.WriteString(g.Str())
		used += g.Width()
	}
	return b.String() + "…"
}

// span is a run of text in one style: lines of rendered Markdown are
// several.
type span struct {
	text  string
	style tcell.Style
}

// cell is one grapheme cluster of styled text and the cells it takes.
type cell struct {
	cl    string
	w     int
	style tcell.Style
}

// wrapSpans breaks one paragraph of styled text (no newlines) into lines
// of at most width cells, by the same rule as wrapLine: at spaces where it
// can, inside a word where it must, a space at a break dropped.
func wrapSpans(spans []span, width int) [][]span {
	width = max(width, 1)
	var cells []cell
	for _, sp := range spans {
		state := -1
		for rest := displayable(sp.text); rest != ""; {
			var c cell
			c.cl, rest, c.w, state = nextCluster(rest, state)
			c.style = sp.style
			cells = append(cells, c)
		}
	}
	var lines [][]span
	var cur []cell
	curW, lastSpace, wAtSpace := 0, -1, 0
	for _, c := range cells {
		broke := false
		for curW+c.w > width && curW > 0 {
			if lastSpace > 0 && c.cl != " " {
				lines = append(lines, joinCells(cur[:lastSpace]))
				cur = append([]cell(nil), cur[lastSpace:]...)
				curW -= wAtSpace
			} else {
				lines = append(lines, joinCells(cur))
				cur, curW = nil, 0
			}
			lastSpace, broke = -1, true
		}
		if broke && c.cl == " " {
			continue
		}
		cur = append(cur, c)
		curW += c.w
		if c.cl == " " {
			lastSpace, wAtSpace = len(cur), curW
		}
	}
	return append(lines, joinCells(cur))
}

// joinCells merges cells into spans of one style each, trailing spaces
// dropped.
func joinCells(cells []cell) []span {
	for len(cells) > 0 && cells[len(cells)-1].cl == " " {
		cells = cells[:len(cells)-1]
	}
	var out []span
	for _, c := range cells {
		if n := len(out); n > 0 && out[n-1].style == c.style {
			out[n-1].text += c.cl
			continue
		}
		out = append(out, span{c.cl, c.style})
	}
	return out
}
