package e2e

import "testing"

// skipShort skips t under go test -short, the fast loop, which leaves out
// the tests that need a browser, a terminal in tmux, a cluster (several
// daemons on PostgreSQL, NATS, haproxy) or a soak: what the test needs is
// said in the one line the skip prints.
func skipShort(t *testing.T, needs string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: needs %s", needs)
	}
}
