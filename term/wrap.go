package term

import (
	"strings"

	"github.com/rivo/uniseg"
)

// wrap breaks text into lines of at most width display cells, at spaces
// where it can and inside a word where it must. It counts display width by
// grapheme cluster, so CJK characters (2 cells) and emoji sequences are
// measured as the terminal draws them. Newlines in text are kept.
func wrap(text string, width int) []string {
	if width < 1 {
		width = 1
	}
	var out []string
	for _, para := range strings.Split(text, "\n") {
		out = append(out, wrapLine(para, width)...)
	}
	return out
}

func wrapLine(s string, width int) []string {
	if s == "" {
		return []string{""}
	}
	var lines []string
	var line strings.Builder
	lineW := 0
	lastSpace, wAtSpace := -1, 0 // byte index in line after the last space, and width there
	g := uniseg.NewGraphemes(s)
	for g.Next() {
		cl := g.Str()
		w := g.Width()
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

// width is the display width of s in terminal cells.
func width(s string) int { return uniseg.StringWidth(s) }

// truncate cuts s to at most w cells, ending with "…" when it cut.
func truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
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
