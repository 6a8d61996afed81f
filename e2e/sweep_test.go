//go:build !e2e_only || e2e_core

package e2e

import (
	"testing"
	"time"

	"albedo/client"
)

// A daemon a test's command started and the test never stopped (here
// `albedo status`, which starts one) is killed at the test's cleanup,
// not left for the next run to find.
func TestTheHarnessStopsWhatATestLeftOnItsHome(t *testing.T) {
	home := t.TempDir()
	var pid int
	t.Run("leaves a daemon", func(t *testing.T) {
		sweepOnCleanup(t, home)
		cli(t, home, "status")
		left := leftoversOf(home)
		if len(left) != 1 {
			t.Fatalf("%d albedo processes on the home after status, want its daemon", len(left))
		}
		pid = left[0]
	})
	for deadline := time.Now().Add(10 * time.Second); client.ProcessAlive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon %d outlived the test that left it", pid)
		}
	}
}
