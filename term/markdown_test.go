package term

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"albedo/wire"
)

const mdReply = "# Plan\n\nSome **bold** and _slanted_ words with `code()` and a [link](https://example.com).\n\n" +
	"- first item\n- second item that is long enough to wrap in a narrow terminal\n  1. nested\n\n" +
	"> quoted words\n\n```go\nfunc main() { fmt.Println(\"a line of code longer than the transcript is wide\") }\n```\n\n---\n\nAfter."

// styleAt finds want on the screen and returns the style of its first
// cell.
func styleAt(t *testing.T, scr tcell.SimulationScreen, want string) tcell.Style {
	t.Helper()
	cells, w, h := scr.GetContents()
	r := rows(scr)
	for y := range h {
		i := strings.Index(r[y], want)
		if i < 0 {
			continue
		}
		x := width(r[y][:i])
		return cells[y*w+x].Style
	}
	t.Fatalf("%q not on the screen:\n%s", want, strings.Join(r, "\n"))
	return tcell.StyleDefault
}

// A reply's Markdown is drawn, not shown as markup: a heading, emphasis,
// inline code, a link with its address, list bullets and numbers, a quote
// behind its bar, a code block set apart behind a gutter (its long line
// cut into pieces, not wrapped into prose), a rule.
func TestMarkdownReplies(t *testing.T) {
	t.Parallel()
	m := NewModel(70, 40)
	s := &SessionView{ID: "s", Follow: true, Events: []wire.Event{msg(1, wire.RoleAssistant, "m", mdReply)}}
	m.Sessions, m.Focus = []*SessionView{s}, 0
	scr := drawn(t, m)
	r := rows(scr)
	joined := strings.Join(r, "\n")
	// The transcript is 46 cells wide beside the sidebar.
	for _, want := range []string{"Plan", "Some bold and slanted words with code() and a", "link (https://example.com).",
		"• first item", "• second item that is long enough to wrap in ", "│   a narrow terminal", "│   1. nested",
		"│ │ quoted words", "╭ code 1 · go", "│ func main() { fmt.Println(\"a line of code l",
		"│ onger than the transcript is wide\") }", "────", "After."} {
		if !strings.Contains(joined, want) {
			t.Errorf("lacks %q", want)
		}
	}
	for _, markup := range []string{"# Plan", "**", "_slanted_", "`", "```", "[link]"} {
		if strings.Contains(joined, markup) {
			t.Errorf("shows the markup %q", markup)
		}
	}
	if t.Failed() {
		t.Fatalf("screen:\n%s", joined)
	}
	if st := styleAt(t, scr, "bold and"); !hasAttr(st, tcell.AttrBold) {
		t.Errorf("bold is not bold")
	}
	if st := styleAt(t, scr, "slanted"); !hasAttr(st, tcell.AttrItalic) {
		t.Errorf("emphasis is not italic")
	}
	if st := styleAt(t, scr, "code()"); st != stCode {
		t.Errorf("inline code style %v", st)
	}
	if st := styleAt(t, scr, "Plan"); !hasAttr(st, tcell.AttrBold) {
		t.Errorf("the heading is not bold")
	}
	if st := styleAt(t, scr, "link"); !hasAttr(st, tcell.AttrUnderline) {
		t.Errorf("the link is not underlined")
	}
}

// What a person typed is shown as typed; only replies are Markdown.
func TestUserTextIsNotMarkdown(t *testing.T) {
	t.Parallel()
	m := NewModel(70, 20)
	s := &SessionView{ID: "s", Follow: true, Events: []wire.Event{msg(1, wire.RoleUser, "u", "**not bold** and `x`")}}
	m.Sessions, m.Focus = []*SessionView{s}, 0
	if r := screen(t, m); !contains(r, "**not bold** and `x`") {
		t.Fatalf("screen:\n%s", strings.Join(r, "\n"))
	}
}

func TestCodeBlocks(t *testing.T) {
	t.Parallel()
	got := codeBlocks(mdReply + "\n\n    indented code\n")
	want := []string{"func main() { fmt.Println(\"a line of code longer than the transcript is wide\") }", "indented code"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("code blocks %q, want %q", got, want)
	}
}

// Markdown from a model is untrusted text: nothing in it may panic the
// renderer or put a control character on the screen.
func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{mdReply, "", "```", "- a\n  - b\n    - c", "| a | b |\n| - | - |\n| 1 | 2 |", "<div>x</div>", "[x]: y\n[x]", "\x1b[31mred", "- [ ] task\n- [x] done",
		"```go\n\tx := \"a\x1b\"\t// c\n```", "```python\n'''\n", "```js\n\t\t`x${\n```", "a\nb\r\nc"} {
		f.Add(s, 20)
	}
	f.Fuzz(func(t *testing.T, s string, w int) {
		w = w%120 + 1
		if w < 1 {
			w = -w + 1
		}
		for _, l := range markdownLines(s, w, stBase) {
			if strings.ContainsFunc(l.text, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Fatalf("markdownLines(%q, %d): line %q holds a control character", s, w, l.text)
			}
		}
	})
}

func hasAttr(st tcell.Style, a tcell.AttrMask) bool {
	_, _, attrs := st.Decompose()
	return attrs&a != 0
}

// A line break in a reply is a line break, as in any chat; a code block
// in a language chroma knows is highlighted (keywords, strings and
// comments each in their own style), its tabs at stops of 4 whatever
// token they fall in, its text unchanged; one in no language stays plain.
func TestLineBreaksAndHighlightedCode(t *testing.T) {
	t.Parallel()
	m := NewModel(70, 30)
	reply := "line one\nline two\n\n```go\nfunc main() {\n\treturn \"hi\" // done\n}\n```\n\n```\nplain\ttext\n```"
	s := &SessionView{ID: "s", Follow: true, Events: []wire.Event{msg(1, wire.RoleAssistant, "m", reply)}}
	m.Sessions, m.Focus = []*SessionView{s}, 0
	scr := drawn(t, m)
	joined := strings.Join(rows(scr), "\n")
	for _, row := range rows(scr) {
		if strings.Contains(row, "line one") && strings.Contains(row, "line two") {
			t.Errorf("the line break collapsed: %q", row)
		}
	}
	for _, want := range []string{"line one", "line two", "│ func main() {", "│     return \"hi\" // done", "│ plain   text"} {
		if !strings.Contains(joined, want) {
			t.Errorf("lacks %q:\n%s", want, joined)
		}
	}
	kw, str, com, plain := styleAt(t, scr, "return"), styleAt(t, scr, `"hi"`), styleAt(t, scr, "// done"), styleAt(t, scr, "plain")
	if kw == str || kw == com || str == com || kw == stCode {
		t.Errorf("tokens share a style: keyword %v, string %v, comment %v", kw, str, com)
	}
	if plain != stCode {
		t.Errorf("a block with no language is styled %v, not as code", plain)
	}
	if got := codeBlocks(reply); len(got) != 2 || got[0] != "func main() {\n\treturn \"hi\" // done\n}" {
		t.Errorf("the code to copy: %q", got)
	}
}
