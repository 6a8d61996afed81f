//go:build !e2e_only || e2e_core

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"albedo/client"
	"albedo/wire"
)

// sessionRow is the row of albedo sessions' table whose ID is id, split
// at the table's gaps of two spaces or more: ID, TITLE, PHASE, EVENTS,
// PROVIDER, MODEL, UNREAD, UPDATED, SHORT ID, FORK OF.
func sessionRow(t *testing.T, table, id string) []string {
	t.Helper()
	for line := range strings.SplitSeq(table, "\n") {
		if strings.HasPrefix(line, id+" ") {
			var cells []string
			for c := range strings.SplitSeq(line, "  ") {
				if c = strings.TrimSpace(c); c != "" {
					cells = append(cells, c)
				}
			}
			return cells
		}
	}
	t.Fatalf("albedo sessions has no row for %s:\n%s", id, table)
	return nil
}

// newSession runs albedo sessions new with args and returns the id.
func newSession(t *testing.T, home string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(lastLine(cli(t, home, append([]string{"sessions", "new"}, args...)...)))
}

// albedo sessions shows each session's short id (what a person types),
// the caller's unread messages, the model a turn would use (the profile's
// default where the session names none) and, on a fork, its parent; a
// short id names the session; a title two sessions share is refused
// with a table to pick from by short id.
func TestCLISessionsTable(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true})
	home := fx.home
	plan := newSession(t, home, "--title", "plan", "--provider", "fake")
	other := newSession(t, home, "--title", "other", "--provider", "echo", "--model", "m7")
	cli(t, home, "send", client.ShortID(plan), "one")
	cli(t, home, "send", "plan", "two")
	if err := fx.c.SetRead(fx.ctx, plan, 4); err != nil {
		t.Fatal(err)
	}
	fork := strings.TrimSpace(lastLine(cli(t, home, "fork", "plan", "--at", "4", "--title", "plan")))

	table := cli(t, home, "sessions")
	unread := map[string]string{} // as the daemon counts them
	items, err := fx.c.FeedItems(fx.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		unread[it.ID] = fmt.Sprint(it.Unread)
	}
	if unread[plan] == "0" || unread[plan] == "" {
		t.Fatalf("the replies after plan's read marker are not unread: %v", items)
	}
	want := map[string][]string{ // UNREAD and the rest: SHORT ID, FORK OF
		plan:  {"fake", "fake-model", unread[plan], client.ShortID(plan), "-"},
		other: {"echo", "m7", unread[other], client.ShortID(other), "-"},
		fork:  {"fake", "fake-model", unread[fork], client.ShortID(fork), "⑂ " + client.ShortID(plan) + " #4"},
	}
	for id, w := range want {
		row := sessionRow(t, table, id)
		if len(row) != 10 || strings.Join(row[4:7], "|") != strings.Join(w[:3], "|") || strings.Join(row[8:], "|") != strings.Join(w[3:], "|") {
			t.Errorf("the row of %s is %q; want provider, model, unread %q and short id, fork of %q:\n%s", id, row, w[:3], w[3:], table)
		}
	}
	if s := named(t, "sessions --json", cliJSON(t, home, "sessions"), "id", plan); s["model"] != "" || s["resolved_model"] != "fake-model" {
		t.Errorf("sessions --json keeps the API's objects: %v", s)
	}

	_, stderr, code := cliRun(t, home, "", "send", "plan", "hi")
	wantExit(t, "a title two sessions have", stderr, code, 2, `"plan" names 2 sessions; name the one you mean by its short id`)
	for _, w := range []string{
		client.ShortID(fork) + "  " + fork + "  plan   ⑂ " + client.ShortID(plan) + " #4  ",
		client.ShortID(plan) + "  " + plan + "  plan   -  ",
	} {
		if !strings.Contains(stderr, w) {
			t.Errorf("the candidates lack %q:\n%s", w, stderr)
		}
	}
	if out := cli(t, home, "send", client.ShortID(fork), "three"); strings.TrimSpace(out) != "fake: three" {
		t.Errorf("send by the short id the list shows: %q", out)
	}

	// A bot keeps no read marker: its list says "-".
	bot, _, code := cliRun(t, home, "", "bots", "add", "helper", "--sessions", plan)
	if code != 0 {
		t.Fatalf("bots add: exit %d", code)
	}
	table = cli(t, home, "--token", strings.TrimSpace(bot), "sessions")
	if row := sessionRow(t, table, plan); len(row) != 10 || row[6] != "-" {
		t.Errorf("a bot's list: %q", row)
	}
}

// sessions new takes the system text, model and effort; sessions set
// changes only the settings given, "" giving one back to its default.
func TestCLISessionSettings(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true})
	home := fx.home
	id := newSession(t, home, "--title", "tuned", "--provider", "fake", "--system", "Be brief.", "--model", "m1", "--effort", "low")
	s, err := fx.c.Session(fx.ctx, id)
	if err != nil || s.System != "Be brief." || s.Model != "m1" || s.Effort != "low" || s.Title != "tuned" {
		t.Fatalf("made: %+v, %v", s, err)
	}
	out := cli(t, home, "sessions", "set", "tuned", "--effort", "high", "--title", "retuned")
	if want := "session " + client.ShortID(id) + ` ("retuned"): provider fake, model m1, effort high, system text its own, 9 bytes, temperature the provider's`; strings.TrimSpace(out) != want {
		t.Errorf("set printed %q, want %q", out, want)
	}
	if s, err = fx.c.Session(fx.ctx, id); err != nil || s.System != "Be brief." || s.Model != "m1" || s.Effort != "high" || s.Title != "retuned" {
		t.Fatalf("after set --effort --title: %+v, %v", s, err)
	}
	stdout, stderr, code := cliRun(t, home, "Answer in verse.\n", "sessions", "set", "retuned", "--system", "-", "--model", "", "--effort", "")
	if code != 0 || !strings.Contains(stdout, "model fake-model (the profile's default), effort -, system text its own, 16 bytes") {
		t.Fatalf("set --system - --model '' --effort '': exit %d, %q, %s", code, stdout, stderr)
	}
	if s, err = fx.c.Session(fx.ctx, id); err != nil || s.System != "Answer in verse." || s.Model != "" || s.Effort != "" {
		t.Fatalf("after set --system - --model '' --effort '': %+v, %v", s, err)
	}
	_, stderr, code = cliRun(t, home, "", "sessions", "set", "retuned", "--effort", "extreme")
	wantExit(t, "an effort no model knows", stderr, code, 2, `--effort is one of none, minimal, low, medium, high, xhigh, max`)
}

// albedo import titles a session whose title a session already has
// "TITLE (imported)", then "(imported 2)"; --title names it; a daemon
// that has no such title keeps the export's.
func TestCLIImportTitle(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "orig", create: wire.SessionCreate{Title: "plan"}})
	file := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(file, []byte(cli(t, fx.home, "export", "plan", "--format", "json")), 0o600); err != nil {
		t.Fatal(err)
	}
	titleOf := func(home, out string) string {
		var doc exported
		if err := json.Unmarshal([]byte(cli(t, home, "export", strings.TrimSpace(lastLine(out)), "--format", "json")), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Session.Title
	}
	for _, want := range []string{"plan (imported)", "plan (imported 2)"} {
		if got := titleOf(fx.home, cli(t, fx.home, "import", file)); got != want {
			t.Errorf("imported as %q, want %q", got, want)
		}
	}
	if got := titleOf(fx.home, cli(t, fx.home, "import", file, "--title", "plan")); got != "plan" {
		t.Errorf("import --title plan: %q", got)
	}
	fresh := newFixture(t, fixtureOpts{})
	if got := titleOf(fresh.home, cli(t, fresh.home, "import", file)); got != "plan" {
		t.Errorf("imported into a daemon without the title: %q", got)
	}
}

// tail -n N prints the last N messages as tail prints them and ends;
// -n +N from event #N; with -f it then follows.
func TestCLITailLines(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "talk"})
	home := fx.home
	for _, text := range []string{"one", "two"} {
		cli(t, home, "send", "talk", text)
	}
	lines := tailedMessages(t, fx, "talk")
	if out := cli(t, home, "tail", "talk", "-n", "3"); out != strings.Join(lines[1:], "\n")+"\n" {
		t.Errorf("tail -n 3 printed:\n%s\nwant the last 3 of:\n%s", out, strings.Join(lines, "\n"))
	}
	last := strings.TrimPrefix(strings.Fields(lines[3])[0], "#")
	if out := cli(t, home, "tail", "talk", "-n", "+"+last); out != lines[3]+"\n" {
		t.Errorf("tail -n +%s printed %q", last, out)
	}
	if out := cli(t, home, "tail", "talk", "-n", "0"); out != "" {
		t.Errorf("tail -n 0 printed %q", out)
	}

	tail := exec.Command(albedoBin, "--home", home, "tail", "talk", "-n", "1", "-f")
	stdout, err := tail.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { tail.Process.Kill(); tail.Wait() }()
	watchdog := time.AfterFunc(30*time.Second, func() { tail.Process.Kill() })
	defer watchdog.Stop()
	sc := bufio.NewScanner(stdout)
	var got []string
	for len(got) < 3 && sc.Scan() {
		got = append(got, sc.Text())
		if len(got) == 1 {
			cli(t, home, "send", "talk", "three")
		}
	}
	want := tailedMessages(t, fx, "talk")[3:]
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("tail -n 1 -f printed %q, want %q", got, want)
	}
}

// tailedMessages are the messages of session as tail prints them.
func tailedMessages(t *testing.T, fx *fixture, session string) []string {
	t.Helper()
	var out []string
	for _, ev := range events(t, fx.ctx, fx.c, session) {
		if ev.Type == wire.EventMessage {
			out = append(out, fmt.Sprintf("#%d %s %s: %s", ev.Offset, ev.Role, ev.Author, ev.Text))
		}
	}
	return out
}

// export --all DIR writes every session into DIR, a file each named by
// title and short id, with the files of its messages beside it where
// import finds them, and says how many.
func TestCLIExportAll(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{})
	home := fx.home
	notes := newSession(t, home, "--title", "Weekly notes: 2026/12")
	bare := newSession(t, home)
	notesFile := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notesFile, []byte("the notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cli(t, home, "send", "Weekly notes: 2026/12", "see", "--file", notesFile)

	dir := filepath.Join(t.TempDir(), "backup")
	if out := cli(t, home, "export", "--all", dir, "--format", "json"); strings.TrimSpace(out) != "wrote 2 of 2 sessions to "+dir {
		t.Fatalf("export --all printed %q", out)
	}
	notesFile = "weekly-notes-2026-12-" + client.ShortID(notes) + ".json"
	var names []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		names = append(names, e.Name())
	}
	wantNames := map[string]bool{notesFile: true, "session-" + client.ShortID(bare) + ".json": true, strings.TrimSuffix(notesFile, ".json") + ".blobs": true}
	if len(names) != len(wantNames) {
		t.Fatalf("export --all wrote %q", names)
	}
	for _, n := range names {
		if !wantNames[n] {
			t.Fatalf("export --all wrote %q", names)
		}
	}
	other := newFixture(t, fixtureOpts{})
	id := strings.TrimSpace(lastLine(cli(t, other.home, "import", filepath.Join(dir, notesFile))))
	if md := cli(t, other.home, "export", id); !strings.Contains(md, "see") || !strings.Contains(md, "# Weekly notes: 2026/12") {
		t.Fatalf("the imported export:\n%s", md)
	}
}
