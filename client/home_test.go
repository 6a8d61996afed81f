package client

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestProcessAliveZombie: an exited child that nobody reaped yet is not
// alive, so `albedo stop` does not wait for a lazy reaper.
func TestProcessAliveZombie(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !ProcessAlive(pid) {
		t.Fatalf("a running child is not alive")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Not waited for: the child becomes a zombie once the kernel is done.
	deadline := time.Now().Add(10 * time.Second)
	for !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d never became a zombie", pid)
		}
		time.Sleep(5 * time.Millisecond) // polling /proc: there is no event to wait on
	}
	if ProcessAlive(pid) {
		t.Errorf("a zombie is alive")
	}
	_ = cmd.Wait()
	if ProcessAlive(pid) {
		t.Errorf("a reaped process is alive")
	}
	if ProcessAlive(0) || ProcessAlive(-1) {
		t.Errorf("pid 0 or -1 is alive")
	}
}
