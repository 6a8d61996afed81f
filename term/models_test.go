package term

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/wire"
)

// /model alone opens the picker: the provider's models, read once,
// listed above the composer with the default marked, filtered by what
// is typed; Tab goes through them and Enter sets the one written. A
// provider that cannot list them says so, and a name typed is set all
// the same; /model default gives the choice back to the profile.
func TestModelPicker(t *testing.T) {
	t.Parallel()
	m := demo()
	s := m.Sessions[0]
	s.Provider, s.ETag, s.Phase = "fake", "e1", wire.PhaseIdle
	if cmds := enter(m, "/model"); cmds != nil || string(m.Composer) != "/model " {
		t.Fatalf("/model: %#v, composer %q", cmds, string(m.Composer))
	}
	if cmds := m.WantModels(); len(cmds) != 1 || cmds[0] != (cmdModels{Provider: "fake"}) {
		t.Fatalf("the models read: %#v", cmds)
	}
	if cmds := m.WantModels(); cmds != nil {
		t.Fatalf("read twice: %#v", cmds)
	}
	if !contains(screen(t, m), "reading the models of fake…") {
		t.Fatalf("while reading:\n%s", strings.Join(screen(t, m), "\n"))
	}
	m.Result(resModels{Provider: "fake", List: wire.Models{Provider: "fake", Default: "fake-model",
		Models: []wire.ModelInfo{{ID: "fake-large", Name: "Fake Large"}, {ID: "fake-model"}, {ID: "other"}}}})
	r := screen(t, m)
	if !contains(r, "fake-large  Fake Large") || !contains(r, "fake-model  (default)") || !contains(r, "other") {
		t.Fatalf("the list:\n%s", strings.Join(r, "\n"))
	}
	tab := func(k tcell.Key) string {
		m.Key(key(k, 0, 0))
		return string(m.Composer)
	}
	for _, want := range []string{"/model fake-large", "/model fake-model", "/model other", "/model fake-large"} {
		if got := tab(tcell.KeyTab); got != want {
			t.Fatalf("Tab: %q, want %q", got, want)
		}
	}
	if got := tab(tcell.KeyBacktab); got != "/model other" {
		t.Fatalf("Shift-Tab: %q", got)
	}
	m.setComposer("/model fake-")
	if r := screen(t, m); contains(r, "other") || !contains(r, "fake-large  Fake Large") {
		t.Fatalf("filtered:\n%s", strings.Join(r, "\n"))
	}
	tab(tcell.KeyTab)
	if got := tab(tcell.KeyTab); got != "/model fake-model" || m.Pane != paneComposer {
		t.Fatalf("Tab in the filtered: %q", got)
	}
	cmds := m.Key(key(tcell.KeyEnter, 0, 0))
	if len(cmds) != 1 || !eqPatch(cmds[0].(cmdPatch).Patch, wire.SessionPatch{Model: ptr("fake-model")}) {
		t.Fatalf("Enter: %#v", cmds)
	}
	cmds = enter(m, "/model default")
	if len(cmds) != 1 || !eqPatch(cmds[0].(cmdPatch).Patch, wire.SessionPatch{Model: ptr("")}) {
		t.Fatalf("/model default: %#v", cmds)
	}

	// A provider that cannot list them.
	s.Provider = "slow"
	m.setComposer("/model ")
	m.WantModels()
	m.Result(resModels{Provider: "slow", Err: &client.Error{Code: wire.CodeUnavailable, Message: "no answer"}})
	if r := screen(t, m); !contains(r, "the models of slow cannot be listed") {
		t.Fatalf("a failure:\n%s", strings.Join(r, "\n"))
	}
	if cmds := m.WantModels(); cmds != nil {
		t.Fatalf("a failure read again: %#v", cmds)
	}
	if cmds := enter(m, "/model typed-one"); len(cmds) != 1 || !eqPatch(cmds[0].(cmdPatch).Patch, wire.SessionPatch{Model: ptr("typed-one")}) {
		t.Fatalf("typed: %#v", cmds)
	}
}

// The status bar shows the model turns go to: the session's own, else
// its profile's default (the session's resolved model), marked; a
// reply streaming is headed by it.
func TestStatusShowsTheEffectiveModel(t *testing.T) {
	t.Parallel()
	m := demo()
	s := m.Sessions[0]
	s.Model = ""
	s.takeSettings(wire.Session{ID: s.ID, Head: 5, ResolvedProvider: "fake", ResolvedModel: "fake-model"})
	if st := m.statusLeft(); !strings.Contains(st, "│ fake-model (default) · effort high") {
		t.Fatalf("the default: %q", st)
	}
	if r := screen(t, m); !contains(r, "assistant · fake-model …") {
		t.Fatalf("the streaming reply's header:\n%s", strings.Join(r, "\n"))
	}
	s.takeSettings(wire.Session{ID: s.ID, Head: 6, Model: "fake-large", ResolvedProvider: "fake", ResolvedModel: "fake-large"})
	s.Model = "fake-large"
	if st := m.statusLeft(); !strings.Contains(st, "│ fake-large · effort high") || strings.Contains(st, "(default)") {
		t.Fatalf("its own: %q", st)
	}
	s.Model = "" // cleared elsewhere: a status push, after its settings event
	if st := m.statusLeft(); !strings.Contains(st, "│ fake-model (default)") {
		t.Fatalf("cleared: %q", st)
	}
	cleared := ""
	m.Item(s.ID, itemEvent(wire.Event{Offset: 7, Type: wire.EventSettings, Model: &cleared, By: "ann", At: t0}))
	if r := screen(t, m); !contains(r, "· model default (by ann)") {
		t.Fatalf("the settings event:\n%s", strings.Join(r, "\n"))
	}
}

func ptr(s string) *string { return &s }
