//go:build !e2e_only || e2e_core

package e2e

import (
	"strings"
	"testing"
)

// albedo models lists what a provider's API serves, its profile's default
// marked; one that lists none says so.
func TestCLIModels(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true})
	out := cli(t, fx.home, "models", "fake")
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if len(rows) != 3 || strings.Fields(rows[1])[0] != "fake-large" || strings.Join(strings.Fields(rows[2]), " ") != "fake-model - yes" {
		t.Fatalf("albedo models fake:\n%s", out)
	}
	if _, stderr, code := cliRun(t, fx.home, "", "models", "echo"); code == 0 || !strings.Contains(stderr, "lists no models") {
		t.Fatalf("albedo models echo: exit %d, %s", code, stderr)
	}
}
