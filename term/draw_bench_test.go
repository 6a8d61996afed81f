package term

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/wire"
)

// longModel is a 120x35 terminal on a session of n messages of a few
// lines each, following the end, with 30 more sessions in the sidebar.
func longModel(n int) *Model {
	m := demo()
	m.Resize(120, 35)
	s := m.Sessions[0]
	s.StreamTurn, s.Phase = "", wire.PhaseIdle
	s.Events = nil
	for i := range n {
		role := wire.RoleUser
		if i%2 == 1 {
			role = wire.RoleAssistant
		}
		text := fmt.Sprintf("message %d: %s", i, strings.Repeat("some words that wrap ", 3+i%12))
		s.Events = append(s.Events, msg(int64(i+1), role, string(role), text))
	}
	for i := range 30 {
		m.Sessions = append(m.Sessions, &SessionView{ID: fmt.Sprintf("s-%08d", i), Title: fmt.Sprintf("session %d", i), Follow: true})
	}
	return m
}

// One keystroke in the composer: the update and the frame it draws, on a
// session of 10 000 messages. The goal is 2 ms or less, well inside a
// frame, so that typing on a long session feels immediate
// (docs/benchmarks.md, the terminal client).
func BenchmarkKeystroke(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			m := longModel(n)
			scr := drawn(b, m)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%200 == 199 {
					m.Key(key(tcell.KeyCtrlU, 0, 0))
				}
				m.Key(key(tcell.KeyRune, 'a', 0))
				Draw(scr, m)
				scr.Show()
			}
		})
	}
}

// A new committed message arriving (a delivery) and the frame it draws.
func BenchmarkEventArrives(b *testing.B) {
	m := longModel(10_000)
	scr := tcell.NewSimulationScreen("UTF-8")
	if err := scr.Init(); err != nil {
		b.Fatal(err)
	}
	scr.SetSize(m.Width, m.Height)
	s := m.Sessions[0]
	Draw(scr, m)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ev := msg(int64(len(s.Events)+1), wire.RoleAssistant, "m1", "a reply of a few words that arrives now")
		m.Item(s.ID, itemEvent(ev))
		Draw(scr, m)
		scr.Show()
	}
}

func itemEvent(ev wire.Event) client.Item {
	return client.Item{Frame: wire.Frame{Op: wire.PushEvent, Event: &ev}}
}

// A keystroke with a 200-line draft (a paste being edited) in the composer.
func BenchmarkKeystrokeLongDraft(b *testing.B) {
	m := longModel(10_000)
	var lines []string
	for i := range 200 {
		lines = append(lines, fmt.Sprintf("\tline %d of the pasted draft", i))
	}
	m.setComposer(strings.Join(lines, "\n"))
	scr := drawn(b, m)
	b.ReportAllocs()
	for b.Loop() {
		m.Key(key(tcell.KeyRune, 'a', 0))
		m.Key(key(tcell.KeyBackspace, 0, 0))
		Draw(scr, m)
		scr.Show()
	}
}

// A 200-line paste with tabs (what tcell delivers between the bracketed
// paste's two marks: a key per character) landing in the composer, and the
// one frame it draws, on a session of 10 000 messages. The paste is one
// edit and one frame, not an update and a frame for each key it holds:
// this benchmark keeps it so.
func BenchmarkPaste200Lines(b *testing.B) {
	m := longModel(10_000)
	var lines []string
	for i := range 200 {
		lines = append(lines, fmt.Sprintf("%s%03d\tcol\t%s", strings.Repeat("\t", i%3), i, strings.Repeat("x", i%50)))
	}
	keys := pasteKeys(strings.Join(lines, "\n"))
	scr := drawn(b, m)
	b.ReportAllocs()
	for b.Loop() {
		m.setComposer("")
		m.Paste(true)
		for _, ev := range keys {
			m.Key(ev)
		}
		m.Paste(false)
		Draw(scr, m)
		scr.Show()
	}
}

// News in one session of a sidebar of 20 000 (a large home; a tenth of
// them forks): the sidebar's order is made again (resort), families and
// all.
func BenchmarkSidebarNews(b *testing.B) {
	m := demo()
	t := time.Unix(1_700_000_000, 0)
	for i := range 20_000 {
		s := &SessionView{ID: fmt.Sprintf("s-%08d", i), Title: fmt.Sprintf("session %d", i), LastActivity: t.Add(time.Duration(i) * time.Second)}
		if i%10 == 9 {
			s.Parent = &wire.ForkPoint{Session: fmt.Sprintf("s-%08d", i-9), Offset: 1}
		}
		m.Sessions = append(m.Sessions, s)
	}
	m.resort()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.touch(m.Sessions[len(m.Sessions)-1-i%100], t.Add(time.Duration(20_000+i)*time.Second))
	}
}
