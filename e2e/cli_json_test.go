//go:build !e2e_only || e2e_core

package e2e

import (
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"albedo/client"
)

// cliJSON runs a listing command with --json and returns the objects of
// its standard output, which must be one JSON array and nothing else.
func cliJSON(t *testing.T, home string, args ...string) []map[string]any {
	t.Helper()
	args = append(args, "--json")
	stdout, stderr, code := cliRun(t, home, "", args...)
	if code != 0 {
		t.Fatalf("albedo %v: exit %d: %s", args, code, stderr)
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	var list []map[string]any
	if err := dec.Decode(&list); err != nil || list == nil {
		t.Fatalf("albedo %v: standard output is not a JSON array (%v):\n%s", args, err, stdout)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		t.Fatalf("albedo %v: standard output holds more than one JSON document:\n%s", args, stdout)
	}
	return list
}

// withKeys fails unless every object of list has every one of keys (the
// API's field names) and none of banned.
func withKeys(t *testing.T, what string, list []map[string]any, keys []string, banned ...string) {
	t.Helper()
	for _, o := range list {
		for _, k := range keys {
			if _, ok := o[k]; !ok {
				t.Errorf("%s: %v has no %q", what, o, k)
			}
		}
		for _, k := range banned {
			if _, ok := o[k]; ok {
				t.Errorf("%s: %v has %q", what, o, k)
			}
		}
	}
}

// named returns the object of list whose field key is value.
func named(t *testing.T, what string, list []map[string]any, key, value string) map[string]any {
	t.Helper()
	for _, o := range list {
		if o[key] == value {
			return o
		}
	}
	t.Fatalf("%s: nothing with %s %q in %v", what, key, value, list)
	return nil
}

// Every command that prints a list prints, with --json, one JSON array of
// objects under the API's field names on standard output and nothing
// else: [] when the list is empty, where the table says so in words.
func TestCLIListsAsJSON(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{})
	home := fx.home
	id := strings.TrimSpace(lastLine(cli(t, home, "sessions", "new", "--title", "listed", "--provider", "echo")))

	for _, empty := range [][]string{{"bots", "ls"}, {"share", "ls", "listed"}} {
		if got := cliJSON(t, home, empty...); len(got) != 0 {
			t.Errorf("albedo %v --json with none: %v", empty, got)
		}
	}

	ss := cliJSON(t, home, "sessions")
	withKeys(t, "sessions --json", ss, []string{"id", "epoch", "title", "workspace", "provider", "resolved_provider", "model", "effort", "phase", "head", "etag", "created_at", "updated_at", "access"})
	if s := named(t, "sessions --json", ss, "id", id); s["title"] != "listed" || s["provider"] != "echo" || s["phase"] != "idle" {
		t.Errorf("sessions --json: %v", s)
	}
	if ls := cliJSON(t, home, "sessions", "ls"); !slices.EqualFunc(ls, ss, func(a, b map[string]any) bool { return a["id"] == b["id"] }) {
		t.Errorf("sessions ls --json %v, sessions --json %v", ls, ss)
	}

	cli(t, home, "bots", "add", "helper")
	bots := cliJSON(t, home, "bots", "ls")
	withKeys(t, "bots ls --json", bots, []string{"name", "sessions", "serving", "created_at"}, "token")
	if b := named(t, "bots ls --json", bots, "name", "helper"); b["sessions"] != nil || b["serving"] != 0.0 {
		t.Errorf("bots ls --json: %v (want sessions null: all)", b)
	}

	me := homeMember(t, fx) // the only member until ann comes
	cli(t, home, "members", "add", "ann")
	ms := cliJSON(t, home, "members", "ls")
	withKeys(t, "members ls --json", ms, []string{"id", "name", "admin", "created_at", "online"}, "token")
	if m := named(t, "members ls --json", ms, "name", "ann"); m["admin"] != false {
		t.Errorf("members ls --json: %v", m)
	}
	if m := named(t, "members ls --json", ms, "name", me); m["admin"] != true {
		t.Errorf("members ls --json, the home's person: %v", m)
	}

	cli(t, home, "sessions", "grant", "listed", "ann", "write")
	gs := cliJSON(t, home, "sessions", "grants", client.ShortID(id))
	withKeys(t, "sessions grants --json", gs, []string{"member", "access", "created_at"})
	if g := named(t, "sessions grants --json", gs, "member", "ann"); g["access"] != "write" {
		t.Errorf("sessions grants --json: %v", g)
	}

	cli(t, home, "share", "listed", "--label", "for-bob", "--expires", "1h")
	links := cliJSON(t, home, "share", "ls", "listed")
	withKeys(t, "share ls --json", links, []string{"session", "label", "access", "expires_at", "created_at"}, "token")
	if l := named(t, "share ls --json", links, "label", "for-bob"); l["session"] != id || l["access"] != "read" {
		t.Errorf("share ls --json: %v", l)
	}

	cli(t, home, "tokens", "add", "--role", "owner", "ops")
	ts := cliJSON(t, home, "tokens", "list")
	withKeys(t, "tokens list --json", ts, []string{"role", "name", "sessions", "created_at"}, "token")
	if o := named(t, "tokens list --json", ts, "name", "ops"); o["role"] != "owner" {
		t.Errorf("tokens list --json: %v", o)
	}
	if b := named(t, "tokens list --json", ts, "name", "helper"); b["role"] != "bot" {
		t.Errorf("tokens list --json: %v", b)
	}
}
