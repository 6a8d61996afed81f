package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"albedo/hub/acphost/fakeagent"
)

// withAgent writes a config.toml whose profile coder is the fake coding
// agent (this test binary, run again by the daemon), and returns a
// workspace for it.
func withAgent(t *testing.T, home string) string {
	t.Helper()
	cfg := fmt.Sprintf("[providers.coder]\nkind = \"acp\"\ncommand = [%q]\nenv = { %s = \"1\", GORACE = %q }\n", os.Args[0], fakeagent.Env,
		strings.TrimPrefix(fakeagent.QuickExit, "GORACE="))
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return ws
}
