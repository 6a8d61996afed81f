//go:build !e2e_only || e2e_term

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"albedo/wire"
)

// A member in a real terminal, as their access changes: narrowed to read,
// the composer's place says the session is read-only and a key typed is
// refused at once, the whole sentence shown; widened again, what they
// start writing is theirs; the grant removed, the status bar says their
// access to the session was removed (not that it was deleted), and Up
// recalls what they were writing. Then the member is removed: the status
// bar says so, with no retry to press.
func TestTerminalMemberLosesAccess(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "shared", create: wire.SessionCreate{Title: "planning"}})
	url, _ := daemonURL(t, fx.home)
	token, _ := writer(t, fx.home, "bob", "shared")
	x := startTmuxEnv(t, fmt.Sprintf("ALBEDO_HOME=%s ALBEDO_URL=%s ALBEDO_TOKEN=%s", t.TempDir(), url, token), 120, 30)
	x.waitPane("the session, connected", func(s string) bool {
		return strings.Contains(s, " connected") && strings.Contains(s, "planning") && strings.Contains(s, "message · /help")
	})

	cli(t, fx.home, "sessions", "grant", "shared", "bob", "read")
	x.waitPane("a read-only composer", has("read-only: you may read this session, not write in it"))
	x.keys("-l", "hello")
	x.waitPane("the refusal, whole", has("read-only: you may read this session, not write in it (/help lists what you can do)"))

	cli(t, fx.home, "sessions", "grant", "shared", "bob", "write")
	x.waitPane("a writable composer", has("message · /help"))
	x.keys("-l", "half a thought")
	x.waitPane("the draft", has("❯ half a thought"))
	cli(t, fx.home, "sessions", "ungrant", "shared", "bob")
	pane := x.waitPane("the access removed, said", has("your access to “planning” was removed"))
	if strings.Contains(pane, "deleted") {
		t.Fatalf("a removed grant said as a deletion:\n%s", pane)
	}
	x.keys("Up")
	x.waitPane("the draft, recalled", has("❯ half a thought"))
	for _, ev := range pageOf(t, fx, "shared") {
		if ev.Type == wire.EventMessage {
			t.Fatalf("a message was posted: %q", ev.Text)
		}
	}

	cli(t, fx.home, "members", "rm", "bob")
	pane = x.waitPane("the token refused, said", has("your access was removed: this token was revoked"))
	if strings.Contains(pane, "retry") || strings.Contains(pane, "unavailable") {
		t.Fatalf("a revoked token offered a retry:\n%s", pane)
	}
	x.keys("C-q")
}
