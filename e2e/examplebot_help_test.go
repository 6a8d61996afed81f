//go:build !e2e_only || e2e_core

package e2e

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The example bot's --help prints its usage with double-dash flags on
// standard output and exits 0, and shows no token it was given; a flag it
// does not know is a usage error (exit 2) that says where help is.
func TestExampleBotHelp(t *testing.T) {
	parallel(t)
	for _, arg := range []string{"--help", "-h"} {
		cmd := exec.Command(botBin, arg)
		cmd.Env = append(os.Environ(), "ALBEDO_BOT_TOKEN=secret-bot-token")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("albedo-examplebot %s: %v\n%s%s", arg, err, stdout.String(), stderr.String())
		}
		out := stdout.String()
		for _, want := range []string{"Usage: albedo-examplebot", "\n  --home DIR ", "\n  --url URL ", "\n  --token TOKEN ", "\n  --pace D ", "(default 50ms)"} {
			if !strings.Contains(out, want) {
				t.Errorf("albedo-examplebot %s lacks %q:\n%s", arg, want, out)
			}
		}
		for _, bad := range []string{"help requested", "\n  -home", "secret-bot-token"} {
			if strings.Contains(out+stderr.String(), bad) {
				t.Errorf("albedo-examplebot %s says %q:\n%s%s", arg, bad, out, stderr.String())
			}
		}
		if stderr.Len() > 0 {
			t.Errorf("albedo-examplebot %s wrote to standard error: %s", arg, stderr.String())
		}
	}
	out, err := exec.Command(botBin, "--no-such-flag").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "--help") {
		t.Fatalf("albedo-examplebot --no-such-flag: %v\n%s", err, out)
	}
}
