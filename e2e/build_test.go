package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// checkBuild holds a daemon's three reports of its build to each other
// and to the checkout it was built from: `albedo --version`, /readyz's
// build, and albedo_build_info on /metrics (get reads the metrics
// address), so that an operator tells the builds of a cluster apart.
func checkBuild(t *testing.T, get func(path string) (int, string)) {
	t.Helper()
	_, body := get("/readyz")
	var ready struct {
		Build struct{ Version, Commit string }
	}
	if err := json.Unmarshal([]byte(body), &ready); err != nil || ready.Build.Version == "" {
		t.Fatalf("/readyz names no build: %s", body)
	}
	out, err := exec.Command(albedoBin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if v := string(out); !strings.Contains(v, ready.Build.Version) || ready.Build.Commit != "" && !strings.Contains(v, "commit "+ready.Build.Commit) {
		t.Fatalf("--version says %q, /readyz %+v", v, ready.Build)
	}
	if head, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		if want := string(head[:12]); !strings.HasPrefix(ready.Build.Commit, want) {
			t.Fatalf("the build names commit %q; the checkout is at %s", ready.Build.Commit, want)
		}
	}
	_, metrics := get("/metrics")
	want := `albedo_build_info{commit="` + ready.Build.Commit + `",version="` + ready.Build.Version + `"} 1`
	if !strings.Contains(metrics, want) {
		t.Fatalf("/metrics has no %s", want)
	}
}
