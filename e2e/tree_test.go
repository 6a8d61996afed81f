//go:build !e2e_only || e2e_core

package e2e

import (
	"os/exec"
	"path"
	"strings"
	"testing"
)

// homeFiles are the names of what a daemon home holds (client/home.go) and
// of SQLite's files beside a database: a run's traces, never source.
var homeFiles = []string{"daemon.json", "daemon.lock", "daemon.log", "daemon.down", "daemon.stable", "page.tokens", "daemon.key"}

// isRunTrace reports whether a tracked path is something a run leaves
// behind: a daemon home's file or a SQLite database.
func isRunTrace(p string) bool {
	base := path.Base(p)
	for _, name := range homeFiles {
		if base == name {
			return true
		}
	}
	for _, ext := range []string{".db", ".db-wal", ".db-shm", ".db-journal"} {
		if strings.HasSuffix(base, ext) {
			return true
		}
	}
	return false
}

// TestNothingARunLeavesIsTracked fails when git tracks a daemon home's
// file or a database anywhere in the repository: a mistyped --home once
// committed a whole home. Outside a git checkout there is nothing to check.
func TestNothingARunLeavesIsTracked(t *testing.T) {
	parallel(t)
	out, err := exec.Command("git", "-C", "..", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v)", err)
	}
	var found []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" && isRunTrace(p) {
			found = append(found, p)
		}
	}
	if len(found) > 0 {
		t.Fatalf("tracked files a run leaves behind (git rm them; .gitignore covers them): %q", found)
	}
}

func TestIsLeftover(t *testing.T) {
	parallel(t)
	for p, want := range map[string]bool{
		"stop/albedo.db": true, "x/daemon.lock": true, "daemon.log": true,
		"a/b/c.db-wal": true, "db/open.go": false, "docs/daemon.md": false,
		"migrations/doc.go": false,
	} {
		if got := isRunTrace(p); got != want {
			t.Errorf("isRunTrace(%q) = %v, want %v", p, got, want)
		}
	}
}
