package term

import (
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/gdamore/tcell/v2"
)

// Code blocks whose fence names a language chroma knows are highlighted:
// chroma's lexer splits the code into tokens, and each kind of token
// takes one of the terminal's sixteen colours, which every theme maps to
// something readable. A block with no language, or one chroma does not
// know, keeps the plain code style: guessing the language would cost a
// pass per lexer on every frame of a streaming reply.

// tokenStyle is the style of a token of type t.
func tokenStyle(t chroma.TokenType) tcell.Style {
	switch {
	case t.InCategory(chroma.Comment):
		return stBase.Foreground(tcell.ColorGray).Italic(true)
	case t == chroma.KeywordType || t.InSubCategory(chroma.NameBuiltin):
		return stBase.Foreground(tcell.ColorTeal)
	case t.InCategory(chroma.Keyword):
		return stBase.Foreground(tcell.ColorPurple).Bold(true)
	case t.InSubCategory(chroma.LiteralString):
		return stBase.Foreground(tcell.ColorGreen)
	case t.InSubCategory(chroma.LiteralNumber), t.InCategory(chroma.Literal):
		return stBase.Foreground(tcell.ColorOlive)
	case t == chroma.NameFunction || t == chroma.NameClass || t.InSubCategory(chroma.NameTag):
		return stBase.Foreground(tcell.ColorBlue)
	case t.InCategory(chroma.Generic) && t == chroma.GenericInserted:
		return stBase.Foreground(tcell.ColorGreen)
	case t.InCategory(chroma.Generic) && t == chroma.GenericDeleted:
		return stBase.Foreground(tcell.ColorRed)
	}
	return stBase
}

// highlightLines returns the code's lines as styled spans, one slice a
// line, or nil when lang names no lexer chroma has.
func highlightLines(lang string, lines []string) [][]span {
	if lang == "" {
		return nil
	}
	lexer := lexers.Get(lang)
	if lexer == nil {
		return nil
	}
	it, err := chroma.Coalesce(lexer).Tokenise(nil, strings.Join(lines, "\n")+"\n")
	if err != nil {
		return nil
	}
	out := make([][]span, 1, len(lines)+1)
	for tok := it(); tok != chroma.EOF; tok = it() {
		st := tokenStyle(tok.Type)
		for i, part := range strings.Split(tok.Value, "\n") {
			if i > 0 {
				out = append(out, nil)
			}
			if part != "" {
				out[len(out)-1] = append(out[len(out)-1], span{part, st})
			}
		}
	}
	// The lexer saw the final newline added above: what follows it is
	// no line of the code.
	for len(out) > len(lines) {
		out = out[:len(out)-1]
	}
	for len(out) < len(lines) {
		out = append(out, nil)
	}
	return out
}

// codeCells is one line of code, as spans, in cells as displayable draws
// them: a tab goes to the next stop of 4 from the line's start, whatever
// span it is in.
func codeCells(spans []span) []cell {
	var cells []cell
	col := 0
	for _, sp := range spans {
		for i, part := range strings.Split(sp.text, "\t") {
			if i > 0 {
				for range tabStop - col%tabStop {
					cells = append(cells, cell{" ", 1, sp.style})
					col++
				}
			}
			state := -1
			for rest := displayable(part); rest != ""; {
				c := cell{style: sp.style}
				c.cl, rest, c.w, state = nextCluster(rest, state)
				cells = append(cells, c)
				col += c.w
			}
		}
	}
	return cells
}

// cutCells cuts a line of code into pieces of at most w cells (at least
// one cell each, so that a piece is never empty): code is never wrapped
// at spaces, as prose is.
func cutCells(cells []cell, w int) [][]span {
	var out [][]span
	for len(cells) > 0 {
		n, used := 0, 0
		for n < len(cells) && (n == 0 || used+cells[n].w <= w) {
			used += cells[n].w
			n++
		}
		out = append(out, joinCells(cells[:n]))
		cells = cells[n:]
	}
	if len(out) == 0 {
		out = append(out, nil)
	}
	return out
}
