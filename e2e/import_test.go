//go:build !e2e_only || e2e_core

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"albedo/wire"
)

// exported is albedo export --format json, decoded.
type exported struct {
	Session wire.Session `json:"session"`
	Events  []wire.Event `json:"events"`
}

// albedo import restores an export under a new id: its settings (the
// system text too, which its provider is then sent), the same events, with
// their offsets, authors, texts and times, found by search too; importing
// the same file again makes another session; a file that is not an
// export is a usage error.
func TestCLIImportRestoresAnExport(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "orig", create: wire.SessionCreate{Title: "the original", Model: "m9"}})
	s, err := fx.c.Session(fx.ctx, "orig")
	if err != nil {
		t.Fatal(err)
	}
	system := "Answer in French."
	if _, err := fx.c.PatchSession(fx.ctx, "orig", s.ETag, wire.SessionPatch{System: &system}); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"first words", "second words\nwith a line"} {
		if _, err := fx.c.PutInput(fx.ctx, "orig", uuid.Must(uuid.NewV7()).String(), text); err != nil {
			t.Fatal(err)
		}
	}
	waitTurnsClosed(t, fx.ctx, fx.c, "orig", 2)
	file := filepath.Join(t.TempDir(), "orig.json")
	if err := os.WriteFile(file, []byte(cli(t, fx.home, "export", "orig", "--format", "json")), 0o600); err != nil {
		t.Fatal(err)
	}
	out := cli(t, fx.home, "import", file)
	id := strings.TrimSpace(lastLine(out))
	if id == "orig" || !strings.Contains(out, "imported 9 events") {
		t.Fatalf("import said:\n%s", out)
	}
	var a, b exported
	if err := json.Unmarshal([]byte(cli(t, fx.home, "export", "orig", "--format", "json")), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(cli(t, fx.home, "export", id, "--format", "json")), &b); err != nil {
		t.Fatal(err)
	}
	if b.Session.Title != "the original (imported)" || b.Session.Model != "m9" || b.Session.System != system || b.Session.Epoch == a.Session.Epoch {
		t.Fatalf("the imported session: %+v", b.Session)
	}
	ja, _ := json.Marshal(a.Events)
	jb, _ := json.Marshal(b.Events)
	if string(ja) != string(jb) {
		t.Fatalf("the events differ:\n%s\n%s", ja, jb)
	}
	var second int64 // where the second input is: the turns' timing decides
	for _, ev := range a.Events {
		if ev.Role == wire.RoleUser && strings.HasPrefix(ev.Text, "second") {
			second = ev.Offset
		}
	}
	var found []wire.SearchResult
	if err := json.Unmarshal([]byte(cli(t, fx.home, "search", "second", "--session", id, "--json")), &found); err != nil {
		t.Fatal(err)
	}
	if len(found) != 2 || found[1].Offset != second || found[1].Session != id {
		t.Fatalf("the imported message (offset %d) is not found: %+v", second, found)
	}
	again := strings.TrimSpace(lastLine(cli(t, fx.home, "import", file)))
	if again == id {
		t.Fatal("a second import reused the first's session")
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`[1, 2]`), 0o600)
	_, stderr, code := cliRun(t, fx.home, "", "import", bad)
	wantExit(t, "a file that is not an export", stderr, code, 2, "not an export")
}
