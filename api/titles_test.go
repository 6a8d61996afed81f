package api

import (
	"testing"

	"albedo/hub/provider"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// waitTitle watches a session from its start until a settings event
// gives it a title, and returns it with who set it.
func (e *env) waitTitle(id string) (title, by string) {
	e.t.Helper()
	w := e.watchFromStart(id)
	for {
		f := w.Next(func(f wire.Frame) bool { return f.Op == wire.PushEvent })
		if f.Event.Type == wire.EventSettings && f.Event.Title != nil {
			return *f.Event.Title, f.Event.By
		}
	}
}

// An untitled session is titled once a turn of it completes: by the
// first words of its first message, or, where its profile says titles =
// "provider", by the provider's answer. A titled session keeps its
// title.
func TestSessionsTitleThemselves(t *testing.T) {
	t.Parallel()
	e, f := newFakeEnvAs(t, "asked", func(p *provider.Profile) { p.Titles = provider.TitlesProvider })
	e.createWith("words", `{}`)
	e.createWith("asked", `{"provider":"asked"}`)
	e.create("named")
	f.Push(fakeopenai.Reply{Chunks: []string{"ok"}}, fakeopenai.Reply{Chunks: []string{`"Quarterly `, `Report"`}})

	e.say("words", "Please summarise the **quarterly** report for me, today. Thanks!")
	if title, by := e.waitTitle("words"); title != "Please summarise the quarterly report for" || by != "albedo" {
		t.Fatalf("by first words: %q by %q", title, by)
	}
	e.say("asked", "what about the numbers?")
	if title, _ := e.waitTitle("asked"); title != "Quarterly Report" {
		t.Fatalf("by the provider: %q", title)
	}
	e.say("named", "hello there")
	e.settle("named", 1)
	var s wire.Session
	if e.do("GET", "/v1/sessions/named", nil, "", &s); s.Title != "t" {
		t.Fatalf("a titled session became %q", s.Title)
	}
}
