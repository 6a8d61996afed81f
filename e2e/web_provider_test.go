//go:build !e2e_only || e2e_web

package e2e

import (
	"testing"

	"albedo/wire"
)

// The page names the provider the daemon resolves a session's turns to:
// config.toml's default_provider for a session made without one, not a
// guess of echo.
func TestWebShowsTheDefaultProvider(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	withDefaultProvider(t, home)
	startDaemon(t, home)
	c, ctx := newClient(t, home), ctxT(t)
	if _, err := c.CreateSession(ctx, "a", wire.SessionCreate{Title: "alpha"}); err != nil {
		t.Fatal(err)
	}
	p := startBrowser(t).open(ownerLink(t, home, "a"))
	p.waitOpen("alpha")
	p.wait("the default provider named", `document.querySelector('#settings').textContent.startsWith('provider local')`)
}
