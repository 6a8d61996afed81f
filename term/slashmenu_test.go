package term

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
)

// Typing / lists the commands above the composer, filtered as more is
// typed; Tab completes as far as they agree, then goes through them,
// Shift-Tab back; a start that one command alone has completes to it,
// with a space when it takes more, and Enter on it runs it.
func TestSlashMenu(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Resize(100, 24)
	typeText(m, "/")
	r := screen(t, m)
	if !contains(r, "/new [PROVIDER]") || !contains(r, "/providers") {
		t.Fatalf("no menu after /:\n%s", strings.Join(r, "\n"))
	}
	typeText(m, "m")
	r = screen(t, m)
	if !contains(r, "/model [NAME]") || !contains(r, "/mouse on|off") || contains(r, "/providers") {
		t.Fatalf("the menu for /m:\n%s", strings.Join(r, "\n"))
	}
	tab := func(k tcell.Key) string {
		m.Key(key(k, 0, 0))
		return string(m.Composer)
	}
	for _, want := range []string{"/mo", "/model", "/mouse", "/model"} {
		if got := tab(tcell.KeyTab); got != want {
			t.Fatalf("Tab: %q, want %q", got, want)
		}
	}
	if got := tab(tcell.KeyBacktab); got != "/mouse" {
		t.Fatalf("Shift-Tab: %q", got)
	}
	if m.Pane != paneComposer {
		t.Fatal("Tab left the composer while the menu was open")
	}
	m.setComposer("/ti")
	if got := tab(tcell.KeyTab); got != "/title " {
		t.Fatalf("/ti Tab: %q", got)
	}
	if r := screen(t, m); contains(r, "/title TEXT") {
		t.Fatal("the menu stays once the command is chosen")
	}
	m.setComposer("/he")
	m.Key(key(tcell.KeyEnter, 0, 0))
	if !m.ShowHelp {
		t.Fatal("Enter on /he did not run /help")
	}
	m.ShowHelp = false
	m.setComposer("draft")
	if tab(tcell.KeyTab); m.Pane != paneSidebar {
		t.Fatal("Tab with no menu does not go to the sidebar")
	}
}
