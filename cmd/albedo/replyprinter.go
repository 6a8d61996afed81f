package main

import (
	"fmt"
	"io"
	"strings"

	"albedo/wire"
)

// replyPrinter shows a reply as it streams, for a person at a terminal:
// the text of partials and deltas as it comes, then, when the message is
// committed, the rest of it and the end of the line. Scripts (stdout not a
// terminal) get committed text only and never use it.
//
// One line is open at a time; anything else printed meanwhile ends it
// first (breakLine), and the reply carries on on a line of its own. A nil
// printer (stdout is not a terminal) shows nothing and commits nothing.
// Only the goroutine reading the subscription uses it.
type replyPrinter struct {
	w      io.Writer
	prefix string // printed before a reply's text: "" for send, "assistant: " for tail

	turn  string // the turn whose text is on the open line
	shown string // that text, as printed
	open  bool   // the line has no end yet
}

// text shows a partial (the reply so far) or a delta (what follows it).
func (p *replyPrinter) text(op wire.Op, t *wire.TextPush) {
	if p == nil {
		return
	}
	full := t.Text
	if op == wire.PushDelta && t.TurnID == p.turn {
		full = p.shown + t.Text
	}
	p.show(t.TurnID, full)
}

// show brings the open line to full, turn's reply so far: only what was
// not shown yet is printed, unless the line was ended or the reply started
// over (a bot's turn moved to another connection), which starts a line.
func (p *replyPrinter) show(turn, full string) {
	if !p.open || p.turn != turn || !strings.HasPrefix(full, p.shown) {
		p.breakLine()
		fmt.Fprint(p.w, p.prefix)
		p.turn, p.shown, p.open = turn, "", true
	}
	fmt.Fprint(p.w, full[len(p.shown):])
	p.shown = full
}

// commit ends the open line with ev, the reply's committed message, and
// note (e.g. " [interrupted]"). It returns false, having printed nothing
// but a line end, when the line does not show the start of ev's text: the
// caller prints the message whole.
func (p *replyPrinter) commit(ev *wire.Event, note string) bool {
	if p == nil {
		return false
	}
	if !p.open || p.turn != ev.TurnID || !strings.HasPrefix(ev.Text, p.shown) {
		p.breakLine()
		return false
	}
	fmt.Fprintln(p.w, ev.Text[len(p.shown):]+note)
	p.open, p.turn, p.shown = false, "", ""
	return true
}

// breakLine ends the open line, if any, so that another may be printed.
func (p *replyPrinter) breakLine() {
	if p != nil && p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}
