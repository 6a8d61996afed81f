package term

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"albedo/wire"
)

func runLine(m *Model, line string) []Cmd {
	m.setComposer(line)
	return m.Key(key(tcell.KeyEnter, 0, 0))
}

// What the terminal refuses before asking the daemon: an effort that is
// not a level, a title of nothing (which would clear the title).
func TestSlashCommandsRefuseBadArguments(t *testing.T) {
	t.Parallel()
	m := demo()
	for _, line := range []string{"/effort bogus", "/effort", "/title", "/title   "} {
		if cmds := runLine(m, line); cmds != nil || !m.NoticeErr || !strings.Contains(m.Notice, "usage") {
			t.Errorf("%q: %#v, notice %q", line, cmds, m.Notice)
		}
	}
	if !strings.Contains(m.Notice, "/title TEXT") {
		t.Errorf("notice %q", m.Notice)
	}
	runLine(m, "/effort bogus")
	if !strings.Contains(m.Notice, "minimal|low|medium|high") {
		t.Errorf("the effort usage does not list the levels: %q", m.Notice)
	}
}

// /delete asks first: y deletes, any other key keeps the session. Once the
// daemon says it is gone, it leaves the sidebar.
func TestDeleteAsksFirst(t *testing.T) {
	t.Parallel()
	m := demo()
	if cmds := runLine(m, "/delete"); cmds != nil {
		t.Fatalf("deleted without asking: %#v", cmds)
	}
	if r := screen(t, m); !contains(r, "delete session planning and all its messages? y/n") {
		t.Fatalf("no question:\n%s", strings.Join(r, "\n"))
	}
	if cmds := m.Key(key(tcell.KeyRune, 'n', 0)); cmds != nil || m.asking != nil || len(m.Composer) != 0 {
		t.Fatalf("n: %#v, composer %q", cmds, string(m.Composer))
	}
	runLine(m, "/delete")
	cmds := m.Key(key(tcell.KeyRune, 'y', 0))
	if len(cmds) != 1 || cmds[0] != (cmdDelete{Session: "s-aaaaaaaa"}) {
		t.Fatalf("y: %#v", cmds)
	}
	m.Result(resDeleted{Session: "s-aaaaaaaa"})
	if len(m.Sessions) != 1 || m.Focused().ID != "s-bbbbbbbb" {
		t.Fatalf("after the delete: %v", ids(m))
	}
}

// /new takes the provider of the session to make; /rename is /title.
func TestNewWithAProviderAndRename(t *testing.T) {
	t.Parallel()
	m := demo()
	if cmds := runLine(m, "/new bot:helper"); len(cmds) != 1 || cmds[0] != (cmdNewSession{Provider: "bot:helper"}) {
		t.Fatalf("/new bot:helper: %#v", cmds)
	}
	if cmds := runLine(m, "/new"); len(cmds) != 1 || cmds[0] != (cmdNewSession{}) {
		t.Fatalf("/new: %#v", cmds)
	}
	cmds := runLine(m, "/rename A plan")
	if len(cmds) != 1 || *cmds[0].(cmdPatch).Patch.Title != "A plan" {
		t.Fatalf("/rename: %#v", cmds)
	}
}

// /mouse off leaves the mouse to the terminal, for selecting text; on takes
// it back for the wheel.
func TestMouseCommand(t *testing.T) {
	t.Parallel()
	m := demo()
	if cmds := runLine(m, "/mouse off"); len(cmds) != 1 || cmds[0] != (cmdMouse{On: false}) {
		t.Fatalf("/mouse off: %#v", cmds)
	}
	if cmds := runLine(m, "/mouse on"); len(cmds) != 1 || cmds[0] != (cmdMouse{On: true}) {
		t.Fatalf("/mouse on: %#v", cmds)
	}
	if cmds := runLine(m, "/mouse"); cmds != nil || !strings.Contains(m.Notice, "usage") {
		t.Fatalf("/mouse: %#v %q", cmds, m.Notice)
	}
}

// A read-only view (a viewer's share) sends and changes nothing: the
// composer takes no text but a /command, typed or pasted, and says why at
// the first key; Ctrl-N and the commands that change a session are
// refused, Esc and Ctrl-C do not interrupt; reading works.
func TestReadOnlyView(t *testing.T) {
	t.Parallel()
	m := demo() // the focused session is running
	m.ReadOnly = true
	typeText(m, "hello")
	if string(m.Composer) != "" || !strings.Contains(m.Notice, "read-only") {
		t.Fatalf("typing: composer %q notice %q", string(m.Composer), m.Notice)
	}
	if cmds := m.Key(key(tcell.KeyEnter, 0, 0)); cmds != nil || string(m.Composer) != "" {
		t.Fatalf("Enter: %#v composer %q", cmds, string(m.Composer))
	}
	m.Paste(true)
	for _, r := range "pasted" {
		m.Key(key(tcell.KeyRune, r, 0))
	}
	m.Paste(false)
	if string(m.Composer) != "" {
		t.Fatalf("a paste went into a read-only composer: %q", string(m.Composer))
	}
	typeText(m, "/he")
	if string(m.Composer) != "/he" {
		t.Fatalf("a command is not typed: %q", string(m.Composer))
	}
	m.setComposer("")
	for _, line := range []string{"/title x", "/new", "/delete", "/model m", "/effort low"} {
		if cmds := runLine(m, line); cmds != nil || m.asking != nil || !strings.Contains(m.Notice, "read-only") {
			t.Errorf("%s: %#v", line, cmds)
		}
	}
	if cmds := m.Key(key(tcell.KeyCtrlN, 0, 0)); cmds != nil {
		t.Fatalf("Ctrl-N: %#v", cmds)
	}
	for _, k := range []tcell.Key{tcell.KeyEscape, tcell.KeyCtrlC} {
		for _, c := range m.Key(key(k, 0, 0)) {
			if _, ok := c.(cmdInterrupt); ok {
				t.Fatalf("%v interrupted", k)
			}
		}
	}
	m.Sessions[0].Events = append(m.Sessions[0].Events, msg(3, "assistant", "m1", "copy me"))
	if cmds := runLine(m, "/copy"); len(cmds) != 1 || cmds[0] != (cmdCopy{Text: "copy me"}) {
		t.Fatalf("/copy: %#v", cmds)
	}
	if r := screen(t, m); !strings.HasPrefix(r[len(r)-1], " viewer (read-only) │") {
		t.Fatalf("status bar %q", r[len(r)-1])
	}
}

// /providers asks the daemon what /new may name and says it: each
// provider with its model, the default marked, then the bots.
func TestProvidersCommand(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Resize(140, 30)
	if cmds := runLine(m, "/providers"); len(cmds) != 1 || cmds[0] != (cmdProviders{}) {
		t.Fatalf("/providers ran %#v", cmds)
	}
	m.Result(resProviders{List: wire.Providers{Default: "local", Providers: []wire.ProviderInfo{
		{Name: "echo", Kind: "echo"}, {Name: "local", Kind: "openai", Model: "m1"},
	}}, Bots: []string{"helper"}})
	if r := screen(t, m); !contains(r, "/new NAME: echo · local (m1) default · bot:helper") {
		t.Fatalf("the list not shown:\n%s", strings.Join(r, "\n"))
	}
}
