package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// albedo migrate applies what a home's store has not had and names it;
// run again, it says there is nothing to apply.
func TestMigrateCommand(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	run := func() string {
		t.Helper()
		var out, errb strings.Builder
		root := newRoot(strings.NewReader(""), &out, &errb)
		root.SetArgs([]string{"--home", home, "migrate"})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := root.ExecuteContext(ctx); err != nil {
			t.Fatalf("albedo migrate: %v\n%s", describe(err), errb.String())
		}
		return out.String()
	}
	if out := run(); !strings.Contains(out, "applied 20261129000001_core") {
		t.Fatalf("first run: %q", out)
	}
	if out := run(); !strings.Contains(out, "nothing to apply") {
		t.Fatalf("second run: %q", out)
	}
}
