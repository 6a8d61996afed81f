//go:build !e2e_only || e2e_core

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"albedo/client"
	"albedo/wire"
)

// cliRun runs an albedo subcommand on home with stdin, and returns its
// standard output and error apart, and its exit status.
func cliRun(t *testing.T, home, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(albedoBin, append([]string{"--home", home}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("albedo %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// wantExit fails unless a run ended with code and its stderr says want.
func wantExit(t *testing.T, what string, stderr string, code, wantCode int, want string) {
	t.Helper()
	if code != wantCode || !strings.Contains(stderr, want) {
		t.Fatalf("%s: exit %d, stderr %q; want exit %d and %q", what, code, stderr, wantCode, want)
	}
}

// Every command that names a session takes the short id the terminal
// shows (the id's last 8 characters), a unique prefix or suffix, or an
// exact title; one that fits several sessions is refused with their list,
// one that fits none exits 4.
func TestCLISessionNames(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{cli: true})
	home := fx.home
	alpha := strings.TrimSpace(lastLine(cli(t, home, "sessions", "new", "--title", "alpha")))
	untitled := strings.TrimSpace(lastLine(cli(t, home, "sessions", "new")))
	twin1 := strings.TrimSpace(lastLine(cli(t, home, "sessions", "new", "--title", "twin")))
	twin2 := strings.TrimSpace(lastLine(cli(t, home, "sessions", "new", "--title", "twin")))

	sends := []struct{ name, text, want string }{
		{client.ShortID(untitled), "hi", "echo: hi"},
		{"alpha", "joined words", "echo: joined words"},
		{alpha[:len(alpha)-3], "by prefix", "echo: by prefix"},
		{untitled[len(untitled)-5:], "by suffix", "echo: by suffix"},
		{alpha, "by id", "echo: by id"},
	}
	for _, s := range sends {
		out, stderr, code := cliRun(t, home, "", append([]string{"send", s.name}, strings.Fields(s.text)...)...)
		if code != 0 || strings.TrimSpace(out) != s.want {
			t.Fatalf("send %s %s: exit %d, printed %q, stderr %q", s.name, s.text, code, out, stderr)
		}
	}
	out, _, code := cliRun(t, home, "read from\nstandard input\n", "send", "alpha", "-")
	if code != 0 || out != "echo: read from\nstandard input\n" {
		t.Fatalf("send -: exit %d, printed %q", code, out)
	}

	_, stderr, code := cliRun(t, home, "", "send", "twin", "hi")
	wantExit(t, "an ambiguous title", stderr, code, 2, `"twin" names 2 sessions`)
	for _, id := range []string{twin1, twin2} {
		if !strings.Contains(stderr, id+"  twin") {
			t.Fatalf("the candidates do not list %s: %q", id, stderr)
		}
	}
	_, stderr, code = cliRun(t, home, "", "send", "nosuch", "hi")
	wantExit(t, "a name of no session", stderr, code, 4, `no session is named "nosuch"`)
	_, stderr, code = cliRun(t, home, "", "send", "alpha", " ")
	wantExit(t, "blank text", stderr, code, 2, "the text is empty")

	// The other commands that name a session take the same names.
	if tok := strings.TrimSpace(cli(t, home, "share", client.ShortID(untitled))); tok == "" {
		t.Fatal("share by short id printed no token")
	}
	_, stderr, code = cliRun(t, home, "", "share", "twin")
	wantExit(t, "share of an ambiguous title", stderr, code, 2, "names 2 sessions")
	_, stderr, code = cliRun(t, home, "", "tail", "nosuch")
	wantExit(t, "tail of no session", stderr, code, 4, `no session is named "nosuch"`)
}

// export prints the whole history: as the API's events (json), and as a
// transcript to read (md); sessions rename and rm take the names too, and
// rm without a terminal needs --yes.
func TestCLIExportRenameRm(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{cli: true})
	home := fx.home
	id := strings.TrimSpace(lastLine(cli(t, home, "sessions", "new", "--title", "log")))
	for _, text := range []string{"one", "two"} {
		cli(t, home, "send", "log", text)
	}
	var doc struct {
		Session wire.Session      `json:"session"`
		Events  []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal([]byte(cli(t, home, "export", client.ShortID(id), "--format", "json")), &doc); err != nil {
		t.Fatalf("export --format json is not JSON: %v", err)
	}
	page, err := fx.c.History(fx.ctx, id, 0, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Session.ID != id || len(doc.Events) != len(page.Events) || len(doc.Events) != 8 {
		t.Fatalf("export: session %q, %d events; the API has %d", doc.Session.ID, len(doc.Events), len(page.Events))
	}
	for i, raw := range doc.Events {
		var ev wire.Event
		if err := json.Unmarshal(raw, &ev); err != nil || !reflect.DeepEqual(ev, page.Events[i]) {
			t.Fatalf("exported event %d is %s, the API's %+v", i, raw, page.Events[i])
		}
	}
	md := cli(t, home, "export", "log")
	for _, want := range []string{"# log\n", "- id: `" + id + "`", "\n## user (" + homeMember(t, fx) + ")\n", "\none\n", "\n## assistant (echo)\n", "\necho: two\n"} {
		if !strings.Contains(md, want) {
			t.Fatalf("the Markdown transcript lacks %q:\n%s", want, md)
		}
	}

	cli(t, home, "sessions", "rename", client.ShortID(id), "a", "new", "title")
	if s, err := fx.c.Session(fx.ctx, id); err != nil || s.Title != "a new title" {
		t.Fatalf("after rename: %+v, %v", s, err)
	}
	_, stderr, code := cliRun(t, home, "", "sessions", "rm", "a new title")
	wantExit(t, "rm without a terminal or --yes", stderr, code, 2, "--yes")
	if _, err := fx.c.Session(fx.ctx, id); err != nil {
		t.Fatalf("a refused rm deleted the session: %v", err)
	}
	cli(t, home, "sessions", "rm", "a new title", "--yes")
	if _, err := fx.c.Session(fx.ctx, id); client.Code(err) != wire.CodeNotFound {
		t.Fatalf("after rm --yes: %v", err)
	}
	_, stderr, code = cliRun(t, home, "", "sessions", "rm", id, "-y")
	wantExit(t, "rm of a deleted session", stderr, code, 4, "no session is named")
}

// Bot errors say what is wrong in words, not HTTP's, and bots ls shows
// times a person reads.
func TestCLIBotMessages(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{cli: true})
	home := fx.home
	_, stderr, code := cliRun(t, home, "", "bots", "rm", "ghost")
	wantExit(t, "bots rm of no bot", stderr, code, 4, `no bot named "ghost"`)
	cli(t, home, "bots", "add", "helper")
	_, stderr, code = cliRun(t, home, "", "bots", "add", "helper")
	wantExit(t, "a second bot of a name", stderr, code, 1, `a bot named "helper" already exists`)
	for _, bad := range []string{"HTTP", "not_found", ": conflict"} {
		if strings.Contains(stderr, bad) {
			t.Fatalf("bots add says %q: %q", bad, stderr)
		}
	}
	ls := cli(t, home, "bots", "ls")
	if !regexp.MustCompile(`(?m)^helper +all +0 +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d *$`).MatchString(ls) {
		t.Fatalf("bots ls:\n%s", ls)
	}
}

// alsoFull is what completing prefix offers for the session plans, whose
// short id is short and whose id is id: the short id, and the full id too
// when the prefix happens to begin it as well (a v7 id begins with its
// time, so today's all begin "01a2"; a short id does once in 4 096).
func alsoFull(before, prefix, short, id string) []string {
	want := []string{before + short + "\tplans"}
	if strings.HasPrefix(id, prefix) {
		want = append(want, before+id+"\tplans")
	}
	return want
}

// --version, and completion: the bash script, and session names offered
// through cobra's __complete wherever a session is named.
func TestCLIVersionAndCompletion(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{cli: true})
	home := fx.home
	if out := cli(t, home, "--version"); !strings.HasPrefix(out, "albedo version "+wire.Version) {
		t.Fatalf("--version: %q", out)
	}
	if out := cli(t, home, "completion", "bash"); !strings.Contains(out, "__albedo_") {
		t.Fatalf("completion bash printed no script:\n%.200s", out)
	}
	// Completing a word never starts a daemon: with none, it offers nothing.
	empty := t.TempDir()
	if out, stderr, code := cliRun(t, empty, "", "__complete", "send", ""); code != 0 || strings.TrimSpace(out) != ":4" {
		t.Fatalf("__complete with no daemon: exit %d, %q, %s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(empty, client.DaemonFile)); !os.IsNotExist(err) {
		t.Fatalf("__complete started a daemon (%v)", err)
	}

	id := strings.TrimSpace(lastLine(cli(t, home, "sessions", "new", "--title", "plans")))
	short := client.ShortID(id)
	tests := []struct {
		args []string
		want []string // lines, before the directive
	}{
		{[]string{"send", ""}, []string{short + "\tplans", "plans\t" + short}},
		{[]string{"send", "pl"}, []string{"plans\t" + short}},
		{[]string{"send", short, ""}, nil}, // TEXT is free
		{[]string{"tail", short[:4]}, alsoFull("", short[:4], short, id)},
		{[]string{"export", id[:8]}, []string{id + "\tplans"}},
		{[]string{"sessions", "rm", ""}, []string{short + "\tplans", "plans\t" + short}},
		{[]string{"sessions", "rename", "p"}, []string{"plans\t" + short}},
		{[]string{"share", "x"}, nil},
		{[]string{"open", "pl"}, []string{"plans\t" + short}},
		{[]string{"bots", "add", "b", "--sessions", "a," + short[:3]}, alsoFull("a,", short[:3], short, id)},
	}
	for _, tt := range tests {
		out, stderr, code := cliRun(t, home, "", append([]string{"__complete"}, tt.args...)...)
		if code != 0 {
			t.Fatalf("__complete %q: exit %d, %s", tt.args, code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		got := lines[:len(lines)-1] // the last is the directive, ":4" and such
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("__complete %q offers %q, want %q", tt.args, got, tt.want)
		}
	}
}
