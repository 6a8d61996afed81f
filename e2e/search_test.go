//go:build !e2e_only || e2e_core

package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"albedo/wire"
)

// albedo search finds what was said in several sessions, newest first,
// as a table and as JSON; in one session with --session; and a query it
// cannot search is a usage error (exit 2) that says why.
func TestCLISearch(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "plans", create: wire.SessionCreate{Title: "plans"}})
	if _, err := fx.c.CreateSession(fx.ctx, "notes", wire.SessionCreate{Title: "notes"}); err != nil {
		t.Fatal(err)
	}
	cli(t, fx.home, "send", "plans", "ship the kettle on Friday")
	cli(t, fx.home, "send", "notes", "the kettle is broken")
	out := cli(t, fx.home, "search", "kettle")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "SESSION") || !strings.HasPrefix(lines[1], "notes") || !strings.Contains(out, "«kettle»") {
		t.Fatalf("search kettle:\n%s", out)
	}
	var found []wire.SearchResult
	if err := json.Unmarshal([]byte(cli(t, fx.home, "search", "kettle", "--session", "plans", "--json")), &found); err != nil {
		t.Fatal(err)
	}
	if len(found) != 2 || found[0].Session != "plans" || found[1].Role != wire.RoleUser || found[1].Offset != 1 {
		t.Fatalf("in plans: %+v", found)
	}
	_, stderr, code := cliRun(t, fx.home, "", "search", `"unclosed`)
	wantExit(t, "an unclosed quote", stderr, code, 2, "quote is not closed")
}
