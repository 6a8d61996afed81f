//go:build !e2e_only || e2e_core

package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// A session made without a provider is served by the daemon's
// default_provider, and albedo sessions (its table and --json) and
// albedo export name that one, not "-" nor echo.
func TestCLIShowsTheDefaultProvider(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	withDefaultProvider(t, home)
	startDaemon(t, home)
	plain := strings.TrimSpace(lastLine(cli(t, home, "sessions", "new", "--title", "plain")))
	echoed := strings.TrimSpace(lastLine(cli(t, home, "sessions", "new", "--title", "echoed", "--provider", "echo")))

	// ID TITLE PHASE EVENTS PROVIDER MODEL UPDATED
	table := cli(t, home, "sessions")
	for id, want := range map[string]string{plain: "local", echoed: "echo"} {
		var row []string
		for line := range strings.SplitSeq(table, "\n") {
			if f := strings.Fields(line); len(f) > 4 && f[0] == id {
				row = f
			}
		}
		if row == nil || row[4] != want {
			t.Errorf("albedo sessions shows %v for %s; want provider %s:\n%s", row, id, want, table)
		}
	}

	ss := cliJSON(t, home, "sessions")
	if s := named(t, "sessions --json", ss, "id", plain); s["provider"] != "" || s["resolved_provider"] != "local" {
		t.Errorf("sessions --json: %v; want provider \"\" and resolved_provider local", s)
	}
	if s := named(t, "sessions --json", ss, "id", echoed); s["provider"] != "echo" || s["resolved_provider"] != "echo" {
		t.Errorf("sessions --json: %v", s)
	}

	if md := cli(t, home, "export", "plain"); !strings.Contains(md, "\n- provider: local (the daemon's default)\n") {
		t.Errorf("export names another provider:\n%s", md)
	}
	if md := cli(t, home, "export", "echoed"); !strings.Contains(md, "\n- provider: echo\n") {
		t.Errorf("export of an echo session:\n%s", md)
	}
	var doc struct {
		Session map[string]any `json:"session"`
	}
	if err := json.Unmarshal([]byte(cli(t, home, "export", "plain", "--format", "json")), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Session["resolved_provider"] != "local" {
		t.Errorf("export --format json: session %v", doc.Session)
	}
}
