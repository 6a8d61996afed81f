package term

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"

	"albedo/wire"
)

// line is one screen line of a transcript: text in one style, or, when
// spans is set, the spans (rendered Markdown), text then being them joined.
type line struct {
	text  string
	style tcell.Style
	spans []span
}

// transcript is a session's committed events rendered for one width: each
// event's lines, wrapped once when it arrives, and the running count of
// lines after each event. A frame finds its first visible line by binary
// search and draws only what shows, so neither a keystroke nor a new event
// costs more in a long session than in a short one.
type transcript struct {
	look   look
	blocks [][]line // the lines of s.Events[i], for i < len(blocks)
	ends   []int    // ends[i]: the lines of blocks[0..i]

	// To link a reply to its question when others came between (inputs
	// queued behind a turn): the questions not answered yet, by turn, and
	// the turn of the last message rendered.
	asked    map[string]string
	lastTurn string

	// callAt is the block of each tool call: that of its first event
	// here, drawn again as the call's later events land.
	callAt map[string]int

	// prevMsg is the offset of the last message rendered (or where the
	// events begin), for the first message after a fork point: the one
	// that shows its versions (versions.go).
	prevMsg int64

	// Replies cut off, by block, as drawn; and the continuations drawn
	// in each reply's block, by the block (continue.go).
	cut   map[int]cutReply
	parts map[int][]int
}

// streamLines is the streaming reply rendered for one width. Deltas only
// add to the text, so the paragraphs before its last newline are wrapped
// once; only the last one is wrapped again as it grows.
type streamLines struct {
	turn   string
	author string // who the header names
	look   look
	done   int    // bytes of the text in stable: whole Markdown blocks
	codes  int    // the code blocks among them
	stable []line // their lines
	text   string // the text rendered last, and its lines
	lines  []line
}

// look is what a rendering depends on besides the events: the width,
// whether headers show times, and whether long tool calls show whole.
type look struct {
	width int
	times bool
	whole bool
}

// view brings s's rendered transcript up to date for o and returns it:
// events that arrived since are rendered, everything again after a change
// of look or of s.Events other than an append (s.rerender). A tool call
// is one block, at its first event: its decision and result, when they
// land, draw that block again and take no lines of their own.
func (s *SessionView) view(o look) *transcript {
	t := &s.rendered
	if t.look != o || len(t.blocks) > len(s.Events) {
		*t = transcript{look: o}
	}
	from := len(t.blocks)
	if from == 0 {
		t.prevMsg = s.firstPrev()
	}
	dirty := from // the first block whose lines changed
	for i := from; i < len(s.Events); i++ {
		ev := s.Events[i]
		var b []line
		switch j, drawn := t.callAt[ev.CallID]; {
		case ev.Type == wire.EventMessage && ev.Continues > 0 && t.joins(s.Events, i, o, &dirty):
			t.replyTo(ev)
			t.prevMsg = ev.Offset // its rest is drawn in the reply it continues
		case !isToolEvent(ev.Type):
			re := t.replyTo(ev)
			b = eventLines(ev, o, re)
			if ev.Type == wire.EventMessage {
				mark := ""
				if _, v, ok := s.versionAfter(t.prevMsg, ev.Offset); ok {
					mark = v.mark()
					b = withMark(b, mark, o.width)
				}
				t.prevMsg = ev.Offset
				t.noteCut(ev, i, re, mark)
			}
		case !drawn:
			if t.callAt == nil {
				t.callAt = map[string]int{}
			}
			t.callAt[ev.CallID] = i
			b = callLines(s.toolCall(ev), o)
		case j < from: // drawn before this event came: again
			t.blocks[j] = callLines(s.toolCall(s.Events[j]), o)
			dirty = min(dirty, j)
		}
		t.blocks = append(t.blocks, b)
	}
	t.ends = t.ends[:dirty]
	for i := dirty; i < len(t.blocks); i++ {
		t.ends = append(t.ends, t.count()+len(t.blocks[i]))
	}
	return t
}

// replyTo returns the question ev answers when ev is a reply that does not
// follow it, and records what later replies need to know.
func (t *transcript) replyTo(ev wire.Event) string {
	if ev.Type != wire.EventMessage || ev.TurnID == "" {
		return ""
	}
	defer func() { t.lastTurn = ev.TurnID }()
	if ev.Role == wire.RoleUser {
		if t.asked == nil {
			t.asked = map[string]string{}
		}
		first, _, _ := strings.Cut(ev.Text, "\n")
		t.asked[ev.TurnID] = first
		return ""
	}
	q, ok := t.asked[ev.TurnID]
	delete(t.asked, ev.TurnID) // answered: the map holds open questions only
	if !ok || t.lastTurn == ev.TurnID {
		return ""
	}
	return q
}

// rerender drops what was rendered: s.Events was replaced, not appended to.
func (s *SessionView) rerender() { s.rendered = transcript{} }

func (t *transcript) count() int {
	if len(t.ends) == 0 {
		return 0
	}
	return t.ends[len(t.ends)-1]
}

// line returns committed line i (0 ≤ i < count).
func (t *transcript) line(i int) line {
	b := sort.SearchInts(t.ends, i+1) // the first block ending after i
	start := 0
	if b > 0 {
		start = t.ends[b-1]
	}
	return t.blocks[b][i-start]
}

// stream returns the streaming reply's lines for o: a header, then the
// text as Markdown; none when no reply streams. The text only grows, so
// the blocks before its last block boundary (a blank line outside a code
// fence) are rendered once; only the last block is rendered again as it
// grows. Code blocks are numbered across the pieces.
func (s *SessionView) stream(o look) []line {
	if s.StreamTurn == "" || s.StreamText == "" && (s.Phase == wire.PhaseApproval || len(s.calls.waiting) > 0) {
		return nil // nothing streams while the turn waits for people to decide its calls
	}
	width := o.width
	c := &s.streaming
	// Among participants, the reply is whoever its turn started for;
	// else the session's model's (its default's, when it names none).
	author := cmp.Or(s.Model, s.defModel)
	if s.turnOf == s.StreamTurn && s.turnBy != "" {
		author = s.turnBy
	}
	if c.turn != s.StreamTurn || c.look != o || c.author != author || !strings.HasPrefix(s.StreamText, c.text[:c.done]) {
		*c = streamLines{turn: s.StreamTurn, look: o, author: author}
		c.stable = []line{header(wire.RoleAssistant, author, streamNote(s), width)}
	}
	if c.text == s.StreamText && c.lines != nil {
		return c.lines
	}
	if end := blockBoundary(s.StreamText, c.done); end > c.done {
		c.stable = c.appendMarkdown(c.stable, s.StreamText[c.done:end], width, true)
		c.done = end
	}
	c.text = s.StreamText
	c.lines = c.appendMarkdown(c.stable[:len(c.stable):len(c.stable)], s.StreamText[c.done:], width, false)
	return c.lines
}

// appendMarkdown renders a piece of the stream after out, a blank line
// between it and the piece before; keep counts its code blocks for the
// pieces after it.
func (c *streamLines) appendMarkdown(out []line, piece string, width int, keep bool) []line {
	if strings.TrimSpace(piece) == "" {
		return out
	}
	r := &mdRenderer{src: []byte(piece), base: stBase, codes: c.codes}
	lines := r.render(width)
	if keep {
		c.codes = r.codes
	}
	if len(out) > 1 { // more than the header
		out = append(out, line{text: "", style: stBase})
	}
	return append(out, lines...)
}

// blockBoundary returns the end of the last blank line in text after from
// that is outside a code fence, or from when there is none: where text can
// be cut into pieces that render as the whole does.
func blockBoundary(text string, from int) int {
	best, fenced := from, false
	lineStart := from
	for lineStart < len(text) {
		end := strings.IndexByte(text[lineStart:], '\n')
		if end < 0 {
			break // the last line is still being written
		}
		l := text[lineStart : lineStart+end]
		if t := strings.TrimLeft(l, " "); len(l)-len(t) < 4 && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) {
			fenced = !fenced
		}
		if !fenced && strings.TrimSpace(l) == "" && lineStart > from {
			best = lineStart + end + 1
		}
		lineStart += end + 1
	}
	return best
}

// lineCount is every line of s's transcript rendered for o: the note that
// older history exists, the committed events, the streaming reply.
func (s *SessionView) lineCount(o look) int {
	n := s.view(o).count() + len(s.stream(o)) + len(s.agentLines(o))
	if s.More {
		n++
	}
	return n
}

// window returns up to h lines of s's transcript rendered for o, from line
// top.
func (s *SessionView) window(o look, top, h int) []line {
	t := s.view(o)
	stream := s.stream(o)
	out := make([]line, 0, h)
	i := top
	if s.More {
		if i == 0 && len(out) < h {
			out = append(out, line{text: "… earlier messages: PgUp or Home to load", style: stDim})
		}
		i = max(i-1, 0)
	}
	for ; len(out) < h && i < t.count(); i++ {
		out = append(out, t.line(i))
	}
	for j := i - t.count(); len(out) < h && j >= 0 && j < len(stream); j++ {
		out = append(out, stream[j])
	}
	agent := s.agentLines(o)
	for j := i - t.count() - len(stream); len(out) < h && j >= 0 && j < len(agent); j++ {
		out = append(out, agent[j])
	}
	return out
}

func appendText(out []line, text string, width int, st tcell.Style) []line {
	for _, l := range wrap(text, width) {
		out = append(out, line{text: l, style: st})
	}
	return out
}

func header(role wire.Role, author, note string, width int) line {
	h := string(role)
	if author != "" && author != h {
		h += " · " + author
	}
	if note != "" {
		h += " " + note
	}
	return line{text: truncate(h, width), style: roleStyle(role)}
}

func roleStyle(role wire.Role) tcell.Style {
	switch role {
	case wire.RoleUser:
		return stUser
	case wire.RoleAssistant:
		return stAssistant
	case wire.RoleBot:
		return stBot
	}
	return stSystem
}

// eventLines renders one committed event: a message with its header (and
// the question it answers, when re is one), the end of a turn that failed
// or was interrupted, a change of settings; other events take no lines.
func eventLines(ev wire.Event, o look, re string) []line {
	var out []line
	width := o.width
	blank := line{text: "", style: stBase}
	switch ev.Type {
	case wire.EventMessage:
		note := ""
		st := stBase
		switch ev.State {
		case wire.MessageInterrupted:
			note, st = "[interrupted]", stDim
		case wire.MessageFailed:
			note = "[failed]"
		}
		if o.times {
			note += " " + ev.At.Local().Format(stampLayout(ev.At))
		}
		out = append(out, header(ev.Role, shownAuthor(ev), strings.TrimSpace(note), width))
		if re != "" {
			out = append(out, line{text: truncate("↪ to: "+re, width), style: stDim})
		}
		if ev.Text != "" || len(ev.Attachments) == 0 {
			out = append(out, messageLines(ev, width, st)...)
		}
		out = append(out, attachmentLines(ev.Attachments, width, "")...)
		out = append(out, blank)
	case wire.EventTurn:
		switch ev.State {
		case wire.TurnFailed:
			out = appendText(out, "⚠ turn failed: "+ev.Error, width, stError)
			out = append(out, blank)
		case wire.TurnInterrupted:
			out = appendText(out, "⏹ interrupted ("+strings.ReplaceAll(ev.Reason, "_", " ")+")", width, stDim)
			out = append(out, blank)
		}
	case wire.EventCompaction:
		head := fmt.Sprintf("⧉ compacted #%d–#%d for the model (by %s, summary by %s):", ev.From, ev.To, orNone(ev.By), orNone(ev.Author))
		out = appendText(out, head, width, stDim)
		out = appendText(out, ev.Text, width, stDim)
		out = append(out, blank)
	case wire.EventNotice:
		out = appendText(out, "· "+ev.Text, width, stDim)
		out = append(out, blank)
	case wire.EventSettings:
		var parts []string
		if ev.Title != nil {
			parts = append(parts, fmt.Sprintf("title %q", *ev.Title))
		}
		if ev.Model != nil {
			parts = append(parts, "model "+cmp.Or(*ev.Model, "default"))
		}
		if ev.Effort != nil {
			parts = append(parts, "effort "+orNone(*ev.Effort))
		}
		if ev.System != nil {
			parts = append(parts, fmt.Sprintf("system text %q", firstWords(*ev.System)))
		}
		parts = append(parts, settingsWords(ev)...)
		out = appendText(out, "· "+strings.Join(parts, ", ")+" (by "+ev.By+")", width, stDim)
	}
	return out
}

// firstWords is the start of a long text, for a one-line mention of it:
// its first line, at most 60 runes, or "(the profile's)" for none.
func firstWords(s string) string {
	if s == "" {
		return "(the profile's)"
	}
	line, _, more := strings.Cut(s, "\n")
	if r := []rune(line); len(r) > 60 {
		line, more = string(r[:60]), true
	}
	if more {
		line += "…"
	}
	return line
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// messageLines is a message's text: Markdown rendered for the replies of
// models and bots, what a person typed as typed.
func messageLines(ev wire.Event, width int, st tcell.Style) []line {
	if ev.Role == wire.RoleUser {
		return appendText(nil, ev.Text, width, st)
	}
	return markdownLines(ev.Text, width, st)
}

// stampLayout is how a message's time shows with times on: the time of
// day, and the date too when it is not today.
func stampLayout(t time.Time) string {
	now := time.Now()
	if y, m, d := t.Local().Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return "15:04"
	}
	return "2006-01-02 15:04"
}

// shownAuthor is who wrote ev as the transcript names them: a guest (a
// write link's, who picked their own name) is marked so, since a guest
// named as someone of the home would otherwise pass for them.
func shownAuthor(ev wire.Event) string {
	if wire.IsGuestAuthor(ev.AuthorID) {
		return ev.Author + " (guest)"
	}
	return ev.Author
}
