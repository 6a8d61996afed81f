package term

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"albedo/wire"
)

// naive renders the whole transcript from scratch, as drawing did before
// it kept rendered events: what the kept lines must always equal.
func naive(s *SessionView, width int) []line {
	var out []line
	if s.More {
		out = append(out, line{text: "… earlier messages: PgUp or Home to load", style: stDim})
	}
	var links transcript
	for _, ev := range s.Events {
		out = append(out, eventLines(ev, look{width: width}, links.replyTo(ev))...)
	}
	if s.StreamTurn != "" {
		out = append(out, header(wire.RoleAssistant, s.Model, "…", width))
		out = append(out, markdownLines(s.StreamText, width, stBase)...)
	}
	return out
}

// Through appends, a change of width, deltas across newlines, a new turn
// and a reset, every window of the kept lines equals a fresh rendering.
func TestRenderedLinesMatchAFreshRendering(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	s := &SessionView{ID: "s", More: true, Model: "m"}
	check := func(step string, width int) {
		t.Helper()
		want := naive(s, width)
		if n := s.lineCount(look{width: width}); n != len(want) {
			t.Fatalf("%s: %d lines, want %d", step, n, len(want))
		}
		for _, top := range []int{0, 1, len(want) / 2, max(len(want)-7, 0), len(want)} {
			got := s.window(look{width: width}, top, 7)
			end := min(top+7, len(want))
			if !reflect.DeepEqual(got, want[top:end]) && !(len(got) == 0 && top == end) {
				t.Fatalf("%s: window(%d, %d) = %v, want %v", step, width, top, got, want[top:end])
			}
		}
	}
	words := []string{"alpha", "beta", "日本語", "\n", "gamma\tdelta", "👩‍💻", "a-much-longer-word-than-the-width",
		"**bold**", "`code`", "\n\n", "\n\n```\nfunc f() {}\n```\n\n", "_it_"}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[rng.IntN(len(words))] + " ")
		}
		return b.String()
	}
	for i := range 30 {
		s.Events = append(s.Events, msg(int64(i+1), wire.RoleUser, "u", text(1+i%9)))
		check(fmt.Sprintf("after event %d", i+1), 20)
	}
	check("wider", 33)
	s.StreamTurn = "t1"
	for i := range 40 {
		s.StreamText += text(rng.IntN(3))
		check(fmt.Sprintf("after delta %d", i), 33)
	}
	s.StreamTurn, s.StreamText = "t2", "new turn"
	check("a new turn", 33)
	s.Events, s.More = nil, false
	s.rerender()
	check("after a reset", 33)
}

// Replies to inputs queued behind a turn name their question; a reply
// right after its question does not.
func TestQueuedRepliesNameTheirQuestion(t *testing.T) {
	t.Parallel()
	m := NewModel(80, 30)
	s := &SessionView{ID: "s", Follow: true}
	q := func(off int64, turn, text string) wire.Event {
		ev := msg(off, wire.RoleUser, "user", text)
		ev.TurnID = turn
		return ev
	}
	a := func(off int64, turn, text string) wire.Event {
		ev := msg(off, wire.RoleAssistant, "echo", text)
		ev.TurnID = turn
		return ev
	}
	s.Events = []wire.Event{q(1, "t1", "first question"), a(2, "t1", "echo: first"),
		q(3, "t2", "second question\nwith two lines"), q(4, "t3", "third question"),
		a(5, "t2", "echo: second"), a(6, "t3", "echo: third")}
	m.Sessions, m.Focus = []*SessionView{s}, 0
	r := screen(t, m)
	joined := strings.Join(r, "\n")
	if strings.Contains(joined, "↪ to: first question") || !strings.Contains(joined, "↪ to: second question") ||
		!strings.Contains(joined, "↪ to: third question") || strings.Contains(joined, "↪ to: second question\nwith") {
		t.Fatalf("links:\n%s", joined)
	}
}

// A guest's message is headed with their name and "(guest)": a guest
// picks their own name, and one named as someone of the home would
// otherwise pass for them. A member of the same name is not marked.
func TestGuestsAreMarked(t *testing.T) {
	t.Parallel()
	head := func(ev wire.Event) string {
		ev.Type, ev.Role = wire.EventMessage, wire.RoleUser
		return eventLines(ev, look{width: 60}, "")[0].text
	}
	if h := head(wire.Event{Author: "ann", AuthorID: "guest:tok1:ann", Text: "hi"}); !strings.Contains(h, "ann (guest)") {
		t.Fatalf("a guest's header %q", h)
	}
	if h := head(wire.Event{Author: "ann", AuthorID: "m-ann", Text: "hi"}); strings.Contains(h, "guest") {
		t.Fatalf("a member's header %q", h)
	}
}
