package term

import (
	"strings"

	"github.com/gdamore/tcell/v2"

	"albedo/wire"
)

// The model picker and the effective model. While the composer holds
// "/model " and the start of a name, the models of the session's
// provider (GET /v1/providers/{name}/models, read once per provider
// while the terminal runs) are listed above it, those holding what is
// typed, the profile's default marked; Tab completes, again goes
// through them, and Enter sets the one in the composer. /model alone
// puts "/model " there. A provider that cannot list its models says so
// in the list's place: a name typed whole is set all the same. The
// status bar shows the model turns go to: the session's own, else its
// profile's default, marked "(default)".

// modelList is what was read of a provider's models.
type modelList struct {
	list    wire.Models
	err     error
	loading bool
}

// modelPick is a Tab completion going through the models listed for
// what was typed (from): sel is the one it put in the composer.
type modelPick struct {
	from string
	sel  int
}

// The Cmd and result that read a provider's models.
type (
	cmdModels struct{ Provider string }
	resModels struct {
		Provider string
		List     wire.Models
		Err      error
	}
)

func (cmdModels) isCmd() {}

// modelCommand is /model.
var modelCommand = slashCommand{"/model [NAME]", "set the model; none: choose from the provider's", func(m *Model, arg string) []Cmd {
	switch arg {
	case "":
		m.setComposer("/model ")
		m.notify(false, "Tab goes through the models, Enter sets the one written; default: the profile's")
		return nil
	case "default":
		arg = ""
	}
	return m.patchFocused(wire.SessionPatch{Model: &arg})
}}

// defaultOf is the model a session's turns go to while it names none:
// its resolved model then ("" when it names one, or none resolves).
func defaultOf(ws wire.Session) string {
	if ws.Model != "" {
		return ""
	}
	return ws.ResolvedModel
}

// modelText is what the status bar says of s's model: its own, else its
// profile's default, marked; "" when neither is known.
func (m *Model) modelText(s *SessionView) string {
	if s.Model != "" {
		return s.Model
	}
	if d := m.defaultModel(s); d != "" {
		return d + " (default)"
	}
	return ""
}

// defaultModel is the model s's turns go to while it names none, as far
// as this client knows: the session's resolved model, else the default
// its provider's list gave.
func (m *Model) defaultModel(s *SessionView) string {
	if s.defModel != "" {
		return s.defModel
	}
	if l := m.models[s.Provider]; l != nil {
		return l.list.Default
	}
	return ""
}

// modelTyped is the name after "/model " while the composer holds
// just that, the cursor at its end.
func (m *Model) modelTyped() (string, bool) {
	if m.Pane != paneComposer || m.Cursor != len(m.Composer) || m.Focused() == nil || m.readOnlyHere() {
		return "", false
	}
	rest, ok := strings.CutPrefix(string(m.Composer), "/model ")
	if !ok || strings.ContainsAny(rest, " \t\n") {
		return "", false
	}
	return rest, true
}

// modelsOpen: the picker lists models (or says why it cannot).
func modelsOpen(m *Model) bool {
	_, ok := m.modelTyped()
	return ok
}

// WantModels returns the Cmd that reads the focused session's
// provider's models, once, when the picker opens.
func (m *Model) WantModels() []Cmd {
	if !modelsOpen(m) {
		return nil
	}
	p := m.Focused().Provider
	if m.models[p] != nil {
		return nil
	}
	if m.models == nil {
		m.models = map[string]*modelList{}
	}
	m.models[p] = &modelList{loading: true}
	return []Cmd{cmdModels{Provider: p}}
}

// modelsRead keeps a provider's models; a failure is kept too, so the
// picker says it and asks no more.
func (m *Model) modelsRead(r resModels) {
	if m.models == nil {
		m.models = map[string]*modelList{}
	}
	m.models[r.Provider] = &modelList{list: r.List, err: r.Err}
}

// modelMatches is the focused session's provider's models whose id
// holds typed, in any case, in the provider's order.
func (m *Model) modelMatches(typed string) []wire.ModelInfo {
	l := m.models[m.Focused().Provider]
	if l == nil {
		return nil
	}
	var out []wire.ModelInfo
	for _, mi := range l.list.Models {
		if strings.Contains(strings.ToLower(mi.ID), strings.ToLower(typed)) {
			out = append(out, mi)
		}
	}
	return out
}

// modelChoices is what the picker lists, and which is chosen: while Tab
// goes through them, those of what was typed before it.
func (m *Model) modelChoices() ([]wire.ModelInfo, int) {
	typed, _ := m.modelTyped()
	if p := m.modelPick; p != nil {
		if ms := m.modelMatches(p.from); p.sel < len(ms) && ms[p.sel].ID == typed {
			return ms, p.sel
		}
	}
	ms := m.modelMatches(typed)
	for i, mi := range ms {
		if mi.ID == typed {
			return ms, i
		}
	}
	return ms, 0
}

// nextModel puts the next model listed in the composer (Shift-Tab: the
// one before).
func (m *Model) nextModel() []Cmd { return m.stepModel(1) }

func (m *Model) prevModel() []Cmd { return m.stepModel(-1) }

func (m *Model) stepModel(step int) []Cmd {
	typed, _ := m.modelTyped()
	ms, sel := m.modelChoices()
	if len(ms) == 0 {
		return nil
	}
	if p := m.modelPick; p == nil || sel >= len(ms) || ms[sel].ID != typed {
		// Not going through them yet: the first (or the last) of what
		// was typed.
		m.modelPick, sel = &modelPick{from: typed}, -1
		if step < 0 {
			sel = 0
		}
	}
	sel = (sel + step + len(ms)) % len(ms)
	m.modelPick.sel = sel
	m.setComposer("/model " + ms[sel].ID)
	return nil
}

// drawModels lists the models above the composer: id, name, the default
// marked; or that they are being read, or why they cannot be.
func drawModels(scr tcell.Screen, m *Model, l layout) {
	if !modelsOpen(m) || m.ShowHelp {
		return
	}
	s := m.Focused()
	ml := m.models[s.Provider]
	switch {
	case ml == nil || ml.loading:
		drawAbove(scr, l, []string{"reading the models of " + s.Provider + "…"}, 0)
		return
	case ml.err != nil:
		drawAbove(scr, l, []string{"the models of " + s.Provider + " cannot be listed (" + spoken(ml.err) + "): type a name"}, 0)
		return
	}
	ms, sel := m.modelChoices()
	if len(ms) == 0 {
		drawAbove(scr, l, []string{"no model of " + s.Provider + " holds that: Enter sets it as typed"}, 0)
		return
	}
	rows := make([]string, len(ms))
	for i, mi := range ms {
		rows[i] = mi.ID
		if mi.Name != "" && mi.Name != mi.ID {
			rows[i] += "  " + mi.Name
		}
		if mi.ID == ml.list.Default {
			rows[i] += "  (default)"
		}
	}
	drawAbove(scr, l, rows, sel)
}
