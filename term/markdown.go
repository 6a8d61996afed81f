package term

import (
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// Markdown: replies are parsed by goldmark (CommonMark and GitHub's
// extensions) and its tree is drawn with tcell styles. Prose wraps to the
// width; a code block is set apart behind a gutter and never wrapped into
// prose (its long lines are cut into pieces, nothing is hidden); each code
// block is numbered, for /copy code N.

var md = goldmark.New(goldmark.WithExtensions(extension.GFM))

var (
	stHeading = stBase.Bold(true).Foreground(tcell.ColorTeal)
	stCode    = stBase.Foreground(tcell.ColorOlive)
	stLink    = stBase.Underline(true).Foreground(tcell.ColorBlue)
	stQuote   = stBase.Italic(true)
	stGutter  = stDim
)

// mdRenderer renders one Markdown text for a width.
type mdRenderer struct {
	src   []byte
	base  tcell.Style
	codes int // code blocks so far, to number them
}

// markdownLines renders text as Markdown for width, prose in base style.
func markdownLines(textSrc string, width int, base tcell.Style) []line {
	r := &mdRenderer{src: []byte(textSrc), base: base}
	return r.render(width)
}

func (r *mdRenderer) render(width int) []line {
	doc := md.Parser().Parse(text.NewReader(r.src))
	return r.blocks(doc, max(width, 1))
}

// blocks renders the children of a container, a blank line between two
// blocks (none inside a tight list item).
func (r *mdRenderer) blocks(parent ast.Node, width int) []line {
	var out []line
	tight := false
	if li, ok := parent.(*ast.ListItem); ok {
		if l, ok := li.Parent().(*ast.List); ok {
			tight = l.IsTight
		}
	}
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		if len(out) > 0 && !tight {
			out = append(out, line{text: "", style: r.base})
		}
		out = append(out, r.block(n, width)...)
	}
	return out
}

func (r *mdRenderer) block(n ast.Node, width int) []line {
	switch n := n.(type) {
	case *ast.Heading:
		st := stHeading
		if n.Level == 1 {
			st = st.Underline(true)
		}
		return r.inline(n, width, st)
	case *ast.Paragraph, *ast.TextBlock:
		return r.inline(n, width, r.base)
	case *ast.FencedCodeBlock:
		return r.code(n, string(n.Language(r.src)), width)
	case *ast.CodeBlock:
		return r.code(n, "", width)
	case *ast.List:
		return r.list(n, width)
	case *ast.Blockquote:
		return prefixed(r.blocks(n, width-2), "│ ", "│ ", stQuote)
	case *ast.ThematicBreak:
		return []line{{text: strings.Repeat("─", min(width, 40)), style: stDim}}
	case *east.Table:
		return r.table(n, width)
	case *ast.HTMLBlock:
		return r.rawLines(n, width)
	}
	return r.blocks(n, width)
}

// inline renders the inline content of n as wrapped lines in style st;
// hard line breaks start new lines.
func (r *mdRenderer) inline(n ast.Node, width int, st tcell.Style) []line {
	paras := [][]span{nil}
	r.spans(n, st, &paras)
	var out []line
	for _, p := range paras {
		for _, l := range wrapSpans(p, width) {
			out = append(out, spanLine(l, st))
		}
	}
	return out
}

// spans appends the inline children of n, styled, to the last paragraph
// of paras; a hard line break starts another.
func (r *mdRenderer) spans(n ast.Node, st tcell.Style, paras *[][]span) {
	add := func(s string, st tcell.Style) {
		p := &(*paras)[len(*paras)-1]
		*p = append(*p, span{s, st})
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			add(string(c.Segment.Value(r.src)), st)
			// A line break is a line break, hard or soft, as in any
			// chat (GFM's breaks); only a blank line makes a paragraph.
			if c.HardLineBreak() || c.SoftLineBreak() {
				*paras = append(*paras, nil)
			}
		case *ast.String:
			add(string(c.Value), st)
		case *ast.CodeSpan:
			add(string(nodeText(c, r.src)), stCode)
		case *ast.Emphasis:
			r.spans(c, emphasis(st, c.Level), paras)
		case *east.Strikethrough:
			r.spans(c, st.StrikeThrough(true), paras)
		case *ast.Link:
			r.spans(c, stLink, paras)
			if dest := string(c.Destination); dest != string(nodeText(c, r.src)) {
				add(" ("+dest+")", stDim)
			}
		case *ast.AutoLink:
			add(string(c.URL(r.src)), stLink)
		case *ast.Image:
			add("[image: "+string(nodeText(c, r.src))+"] ("+string(c.Destination)+")", stDim)
		case *east.TaskCheckBox:
			add(map[bool]string{true: "☑ ", false: "☐ "}[c.IsChecked], st)
		case *ast.RawHTML:
			for i := 0; i < c.Segments.Len(); i++ {
				seg := c.Segments.At(i)
				add(string(seg.Value(r.src)), st)
			}
		default:
			r.spans(c, st, paras)
		}
	}
}

func emphasis(st tcell.Style, level int) tcell.Style {
	if level >= 2 {
		return st.Bold(true)
	}
	return st.Italic(true)
}

// nodeText is the plain text of n's inline descendants.
func nodeText(n ast.Node, src []byte) []byte {
	var b []byte
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b = append(b, c.Segment.Value(src)...)
		case *ast.String:
			b = append(b, c.Value...)
		default:
			b = append(b, nodeText(c, src)...)
		}
	}
	return b
}

// code renders a code block behind a gutter, headed by its number and
// language (/copy code N, or Ctrl-Y then c, copies it), highlighted when
// chroma knows the language (highlight.go); lines longer than the width
// are cut into pieces.
func (r *mdRenderer) code(n ast.Node, lang string, width int) []line {
	r.codes++
	head := "code " + strconv.Itoa(r.codes)
	if lang != "" {
		head += " · " + lang
	}
	out := []line{{text: truncate("╭ "+head, width), style: stGutter}}
	w := max(width-2, 1)
	src := codeLines(n, r.src)
	lit := highlightLines(lang, src)
	for i, l := range src {
		spans := []span{{l, stCode}}
		if lit != nil {
			spans = lit[i]
		}
		for _, piece := range cutCells(codeCells(spans), w) {
			out = append(out, spanLine(append([]span{{"│ ", stGutter}}, piece...), stCode))
		}
	}
	return out
}

// codeLines is the text of a code block, a line each, without line ends.
func codeLines(n ast.Node, src []byte) []string {
	lines := n.Lines()
	out := make([]string, 0, lines.Len())
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		out = append(out, strings.TrimRight(string(seg.Value(src)), "\r\n"))
	}
	return out
}

// list renders a list: a bullet or number before each item, its lines
// indented under it.
func (r *mdRenderer) list(l *ast.List, width int) []line {
	var out []line
	num := l.Start
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		marker := "• "
		if l.IsOrdered() {
			marker = strconv.Itoa(num) + ". "
			num++
		}
		pad := strings.Repeat(" ", width0(marker))
		if len(out) > 0 && !l.IsTight {
			out = append(out, line{text: "", style: r.base})
		}
		out = append(out, prefixed(r.blocks(item, width-len(pad)), marker, pad, r.base)...)
	}
	return out
}

func width0(s string) int { return width(s) }

// table renders a GitHub table a row per line, cells apart by " │ ".
func (r *mdRenderer) table(t *east.Table, width int) []line {
	var out []line
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var sp []span
		st := r.base
		if _, head := row.(*east.TableHeader); head {
			st = st.Bold(true)
		}
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			if len(sp) > 0 {
				sp = append(sp, span{" │ ", stDim})
			}
			paras := [][]span{nil}
			r.spans(c, st, &paras)
			for _, p := range paras {
				sp = append(sp, p...)
			}
		}
		for _, l := range wrapSpans(sp, width) {
			out = append(out, spanLine(l, st))
		}
	}
	return out
}

// rawLines shows an HTML block as its text.
func (r *mdRenderer) rawLines(n ast.Node, width int) []line {
	var out []line
	for _, l := range codeLines(n, r.src) {
		out = appendText(out, l, width, r.base)
	}
	return out
}

// prefixed puts first before the first line and rest before the others.
func prefixed(lines []line, first, rest string, st tcell.Style) []line {
	out := make([]line, 0, len(lines))
	for i, l := range lines {
		p := rest
		if i == 0 {
			p = first
		}
		sp := l.spans
		if sp == nil {
			sp = []span{{l.text, l.style}}
		}
		out = append(out, spanLine(append([]span{{p, st}}, sp...), l.style))
	}
	if len(out) == 0 {
		out = append(out, line{text: first, style: st})
	}
	return out
}

// spanLine makes a line of spans; its text is theirs joined (for search
// and copy), its style the one of a line without spans.
func spanLine(sp []span, st tcell.Style) line {
	var b strings.Builder
	for _, s := range sp {
		b.WriteString(s.text)
	}
	return line{text: b.String(), style: st, spans: sp}
}

// codeBlocks returns the code blocks of a Markdown text, in order: what
// /copy code N copies.
func codeBlocks(src string) []string {
	b := []byte(src)
	doc := md.Parser().Parse(text.NewReader(b))
	var out []string
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			out = append(out, strings.Join(codeLines(n, b), "\n"))
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return out
}
