//go:build !e2e_only || e2e_web

package e2e

import (
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"albedo/client"
	"albedo/wire"
)

// albedo open prints its link whatever becomes of the browser, and says
// on standard error whether one opened it: $BROWSER is first a script that
// records the link it is given, then false, which opens nothing (as
// xdg-open does on a machine with no browser). The link has albedo
// share's form and logs a page in as the home's member, through a personal
// token of that browser: not daemon.json's, which is new on every boot;
// the same on a second open, another for another browser.
func TestCLIOpenPrintsTheLinkAndSaysWhetherItOpened(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "opened"}})
	info, err := client.ReadDaemonFile(fx.home)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	recorded := filepath.Join(dir, "link")
	browser := filepath.Join(dir, "browser")
	if err := os.WriteFile(browser, []byte("#!/bin/sh\nprintf '%s' \"$1\" > '"+recorded+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	open := func(browser string, args ...string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(albedoBin, append([]string{"--home", fx.home, "open"}, args...)...)
		cmd.Env = append(os.Environ(), "BROWSER="+browser)
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var ee *exec.ExitError
		// A browser that fails: exit status 1, the link printed all the same.
		if failed := browser == "false"; err != nil && !(failed && errors.As(err, &ee) && ee.ExitCode() == 1) || err == nil && failed {
			t.Fatalf("albedo open %v with BROWSER=%s: %v\n%s%s", args, browser, err, o.String(), e.String())
		}
		return o.String(), e.String()
	}
	base := "http://127.0.0.1:" + strconv.Itoa(info.Port) + "/#"
	tokens := map[string]string{} // by browser
	wantLink := func(out, frag, browser string) string {
		t.Helper()
		rest, ok := strings.CutPrefix(strings.TrimSpace(out), base)
		q, err := url.ParseQuery(rest)
		tok := q.Get("token")
		if !ok || err != nil || !strings.HasPrefix(tok, "almem_") || tok == info.Token || !strings.HasSuffix(out, "\n") ||
			len(q.Get("k")) != 64 || (frag != "") != (q.Get("session") == "s") {
			t.Fatalf("albedo open printed %q, not the link %s%sk=<the daemon's key>&token=<a personal token>", out, base, frag)
		}
		if was, seen := tokens[browser]; seen && was != tok {
			t.Fatalf("a second open with %s made another token", browser)
		}
		for b, other := range tokens {
			if b != browser && other == tok {
				t.Fatalf("%s and %s share a token", b, browser)
			}
		}
		tokens[browser] = tok
		return strings.TrimSpace(out)
	}
	if share := lastLine(cli(t, fx.home, "share", "s")); !regexp.MustCompile(`^` + regexp.QuoteMeta(base) + `session=s&token=\S+$`).MatchString(share) {
		t.Fatalf("albedo share printed %q: not the form albedo open's test expects", share)
	}

	out, stderr := open(browser, "s")
	link := wantLink(out, "session=s&", browser)
	again, _ := open(browser, "s")
	wantLink(again, "session=s&", browser)
	if want := "opened the browser client with $BROWSER (" + browser + ")\n"; stderr != want {
		t.Fatalf("albedo open said %q, not %q", stderr, want)
	}
	if b, err := os.ReadFile(recorded); err != nil || string(b) != link {
		t.Fatalf("the browser was given %q (%v), not the link printed", b, err)
	}
	p := startBrowser(t).open(link)
	p.waitOpen("opened")
	if role := eval[string](p, `albedo.role`); role != "owner" {
		t.Fatalf("the link logged the page in as %q", role)
	}

	out, stderr = open("false")
	wantLink(out, "", "false")
	if want := "albedo: no browser opened: $BROWSER (false) failed with exit status 1; open the link above\n"; stderr != want {
		t.Fatalf("albedo open said %q, not %q", stderr, want)
	}
}
