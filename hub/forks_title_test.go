package hub

import (
	"strings"
	"testing"

	"albedo/wire"
)

// An untitled fork's title marks it as a parent's nth fork, nests under a
// fork's mark, and stays within the bound of titles.
func TestForkTitle(t *testing.T) {
	long := strings.Repeat("é", wire.MaxTitleBytes/2)
	for _, c := range []struct {
		parent string
		n      int
		want   string
	}{
		{"plan", 1, "plan (fork 1)"},
		{"plan (fork 2)", 1, "plan (fork 2.1)"},
		{"plan (fork 2.1)", 3, "plan (fork 2.1.3)"},
		{"plan (fork x)", 1, "plan (fork x) (fork 1)"},
		{"plan (fork 2.)", 1, "plan (fork 2.) (fork 1)"},
	} {
		if got := forkTitle(c.parent, c.n); got != c.want {
			t.Errorf("forkTitle(%q, %d) = %q, want %q", c.parent, c.n, got, c.want)
		}
	}
	got := forkTitle(long, 12)
	if len(got) > wire.MaxTitleBytes || !strings.HasSuffix(got, " (fork 12)") || !strings.HasPrefix(got, "éé") || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("a long title: %d bytes, %q", len(got), got[len(got)-20:])
	}
}
