package term

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"

	"albedo/wire"
)

// A tool call's block in the transcript: what the model said before its
// calls (on the first call of a response, as a reply), then the call:
//
//	⚙ bot:example/word_count · completed
//	  {"text":"one two three"}
//	  ✓ allowed by ann
//	  │ 3 words
//
// Arguments that pass the width are indented JSON; arguments and output
// longer than toolFoldFrom lines show their first toolFoldShow, then
// "[N more lines · Ctrl-O shows]", as a long paste folds in the composer:
// a tool's output may be 256 KiB, and the conversation around it is what
// the person reads. Ctrl-O shows them whole (look.whole).

const (
	toolFoldFrom = 12
	toolFoldShow = 6
)

// Styles of a call's block.
var (
	stTool = stBase.Bold(true)
	stWait = stBase.Foreground(tcell.ColorOlive).Bold(true)
	stDone = stBase.Foreground(tcell.ColorGreen)
)

// callLines renders a call's block as it stands.
func callLines(c *toolCall, o look) []line {
	var out []line
	width := o.width
	blank := line{text: "", style: stBase}
	if c.call != nil && strings.TrimSpace(c.call.Text) != "" {
		note := ""
		if o.times {
			note = c.call.At.Local().Format(stampLayout(c.call.At))
		}
		out = append(out, header(wire.RoleAssistant, c.call.Author, note, width))
		out = append(out, markdownLines(c.call.Text, width, stBase)...)
		out = append(out, blank)
	}
	state, st := callState(c)
	tool := "a call older than the history loaded"
	if c.call != nil {
		tool = c.call.Tool
	}
	head := []span{{"⚙ " + tool, stTool}, {" · " + state, st}}
	if title, ok := agentHead(c); ok { // a coding agent's call: its title, the tool as a label
		head = []span{{"⚙ " + title, stTool}, {" " + tool, stDim}, {" · " + state, st}}
	}
	for _, sp := range wrapSpans(head, width) {
		out = append(out, spanLine(sp, stBase))
	}
	out = append(out, locationLines(c, o)...)
	if diff := showsDiff(c); diff != "" {
		out = append(out, diffLines(diff, o)...)
	} else {
		out = append(out, argLines(c, o)...)
	}
	out = append(out, decisionLines(c, width)...)
	out = append(out, resultLines(c, o)...)
	return append(out, blank)
}

// callState is the word the header gives a call's state, and its style.
func callState(c *toolCall) (string, tcell.Style) {
	switch {
	case c.result != nil:
		switch c.result.State {
		case wire.ToolCompleted:
			return c.result.State, stDone
		case wire.ToolFailed, wire.ToolDenied:
			return c.result.State, stError
		}
		return c.result.State, stDim
	case c.approval != nil && c.approval.Decision == wire.DecisionDeny:
		return "denied", stError
	case c.approval == nil && c.call != nil && c.call.Policy == wire.PolicyAsk:
		return "waiting for a decision", stWait
	}
	return "running", stAssistant
}

// argLines is a call's arguments: compact JSON when it fits the width,
// indented when not.
func argLines(c *toolCall, o look) []line {
	if c.call == nil || len(c.call.Arguments) == 0 {
		return nil
	}
	args := string(c.call.Arguments)
	if width(args) > o.width-2 {
		var b bytes.Buffer
		if json.Indent(&b, c.call.Arguments, "", "  ") == nil {
			args = b.String()
		}
	}
	return foldText(args, o.width-2, o.whole, func(l string) line { return line{text: "  " + l, style: stDim} })
}

// decisionLines says who decided a call: a person (with their reason),
// or the daemon's policy; nothing while it waits, or for a call that
// ended before any decision (its error says why).
func decisionLines(c *toolCall, width int) []line {
	var text string
	st := stDim
	switch a := c.approval; {
	case a != nil:
		who := shownAuthor(*a)
		if who == "" {
			who = "someone"
		}
		switch a.Decision {
		case wire.DecisionAllow:
			text, st = "✓ allowed by "+who, stBase
		case wire.DecisionAllowSession:
			text, st = "✓ allowed for this session by "+who, stBase
		default:
			text, st = "✗ denied by "+who, stError
		}
		if a.Reason != "" {
			text += ": " + a.Reason
		}
	case c.call == nil:
		return nil
	case c.call.Policy == wire.PolicyAllow:
		text = "✓ allowed by the policy"
	case c.call.Policy == wire.PolicyAgent:
		text = "· run by the agent without asking"
	case c.call.Policy == wire.PolicyDeny && c.result != nil && c.result.State == wire.ToolDenied:
		text = "✗ denied by the policy"
	default:
		return nil
	}
	return indented(text, width, st)
}

// resultLines is a call's output behind a gutter, and the error of one
// that did not complete (a denial says who in its decision line).
func resultLines(c *toolCall, o look) []line {
	r := c.result
	if r == nil {
		return nil
	}
	var out []line
	if text := strings.TrimRight(r.Text, "\n"); text != "" {
		out = foldText(text, o.width-4, o.whole, func(l string) line {
			return spanLine([]span{{"  │ ", stDim}, {l, stBase}}, stBase)
		})
	} else if r.State == wire.ToolCompleted && len(r.Attachments) == 0 {
		out = append(out, line{text: "  │ (no output)", style: stDim})
	}
	out = append(out, attachmentLines(r.Attachments, o.width, "  ")...)
	if r.Error != "" && r.State != wire.ToolDenied {
		out = append(out, indented("⚠ "+r.Error, o.width, stError)...)
	}
	return out
}

// indented is text wrapped two cells in from width, in style st.
func indented(text string, width int, st tcell.Style) []line {
	var out []line
	for _, l := range wrap(text, width-2) {
		out = append(out, line{text: "  " + l, style: st})
	}
	return out
}

// foldText wraps text to w cells a line, each made a line by mk. Past
// toolFoldFrom lines it folds, unless whole: the first toolFoldShow
// lines, then how many lines of the text are left (and their size, when
// that says more). Folded, only what shows is wrapped: an output may be
// 256 KiB, and a transcript is drawn again whole at each change of width.
func foldText(text string, w int, whole bool, mk func(string) line) []line {
	var out []line
	shown, shownBytes := 0, 0 // the text's lines shown whole, and their bytes
	for rest := text; ; {
		para, after, more := strings.Cut(rest, "\n")
		lines := wrapHead(para, w, whole)
		if len(out)+len(lines) <= toolFoldShow {
			shown, shownBytes = shown+1, shownBytes+len(para)+1
		}
		for _, l := range lines {
			out = append(out, mk(l))
		}
		if !more || !whole && len(out) > toolFoldFrom {
			break
		}
		rest = after
	}
	if whole || len(out) <= toolFoldFrom {
		return out
	}
	n := strings.Count(text, "\n") + 1 - shown
	label := fmt.Sprintf("%d more lines", n)
	if n == 1 {
		label = "1 more line"
	}
	if hidden := len(text) - shownBytes; hidden >= 1<<10 {
		label += fmt.Sprintf(", %d KiB", hidden>>10)
	}
	return append(out[:toolFoldShow:toolFoldShow], line{text: "  [" + label + " · Ctrl-O shows]", style: stDim})
}

// wrapHead wraps a line of text to w cells, or, unless whole, only as
// much of its start as makes more lines than a fold shows: a line of
// toolFoldFrom+1 lines of w runes each can be no longer in bytes.
func wrapHead(para string, w int, whole bool) []string {
	limit := (toolFoldFrom + 1) * max(w, 1) * utf8.UTFMax
	if whole || len(para) <= limit {
		return wrap(para, w)
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(para[cut]) {
		cut--
	}
	if lines := wrap(para[:cut], w); len(lines) > toolFoldFrom {
		return lines // its first lines are the whole line's: only the last may differ
	}
	return wrap(para, w) // zero-width characters: few lines for their bytes
}
