//go:build !e2e_only || e2e_core

package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/wire"
)

// A name set in config.toml on a home already in use renames the home's
// member: members lists one admin, by the new name, and what the owner
// wrote before and after is one author's. albedo members rename renames
// another member.
func TestConfigNameRenamesTheHomesMember(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s"})
	cli(t, fx.home, "members", "add", "ann")
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "before"); err != nil {
		t.Fatal(err)
	}
	first := names(cliJSON(t, fx.home, "members", "ls"))
	if len(first) != 2 || !slices.Contains(first, "ann") {
		t.Fatalf("members before: %v", first)
	}

	fx.d.stop()
	if err := os.WriteFile(filepath.Join(fx.home, client.ConfigFile), []byte("name = \"alice\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, fx.home)
	ms := cliJSON(t, fx.home, "members", "ls")
	if got := names(ms); !slices.Equal(got, []string{"alice", "ann"}) {
		t.Fatalf("members after name = alice: %v, before %v", got, first)
	}
	for _, m := range ms {
		if m["name"] == "alice" && m["admin"] != true {
			t.Fatalf("alice is no admin: %v", m)
		}
	}
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "after"); err != nil {
		t.Fatal(err)
	}
	var before, after wire.Event
	for _, ev := range events(t, fx.ctx, fx.c, "s") {
		switch ev.Text {
		case "before":
			before = ev
		case "after":
			after = ev
		}
	}
	if after.Author != "alice" || after.AuthorID == "" || after.AuthorID != before.AuthorID {
		t.Fatalf("before %q (%s), after %q (%s): one person, now alice", before.Author, before.AuthorID, after.Author, after.AuthorID)
	}

	cli(t, fx.home, "members", "rename", "ann", "anna")
	if got := names(cliJSON(t, fx.home, "members", "ls")); !slices.Equal(got, []string{"alice", "anna"}) {
		t.Fatalf("members after the rename: %v", got)
	}
	if _, stderr, code := cliRun(t, fx.home, "", "members", "rename", "anna", "alice"); code == 0 || !strings.Contains(stderr, `the name "alice" is taken`) {
		t.Fatalf("a taken name: exit %d, %s", code, stderr)
	}
}

// names are the "name" fields of rows.
func names(rows []map[string]any) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r["name"].(string))
	}
	slices.Sort(out)
	return out
}
