//go:build !e2e_only || e2e_core

package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"albedo/client"
)

// A second daemon on the same home refuses with a clear message; a stale
// daemon.json naming a dead pid does not block a new daemon.
func TestOneDaemonPerHome(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	d := startDaemon(t, home)
	out, err := exec.Command(albedoBin, "daemon", "--home", home).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("second daemon: err %v, output %s", err, out)
	}
	if !strings.Contains(string(out), "already running") {
		t.Fatalf("second daemon's message: %s", out)
	}
	// A lock that cannot be taken for another reason is not status 3,
	// which says "held by another daemon" (here daemon.lock is a directory).
	other := t.TempDir()
	if err := os.Mkdir(filepath.Join(other, client.LockFile), 0o700); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(albedoBin, "daemon", "--home", other).CombinedOutput()
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "lock") {
		t.Fatalf("daemon on a home it cannot lock: err %v, output %s", err, out)
	}
	d.stop()
	if _, err := os.Stat(filepath.Join(home, client.DaemonFile)); !os.IsNotExist(err) {
		t.Fatalf("daemon.json after a graceful stop: %v", err)
	}

	// A crash leaves daemon.json behind with a dead pid.
	stale := `{"pid":999999,"port":1,"token":"old","boot":"old"}`
	if err := os.WriteFile(filepath.Join(home, client.DaemonFile), []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(albedoBin, "--home", home, "sessions").CombinedOutput()
	if err != nil {
		t.Fatalf("sessions with a stale daemon.json: %v %s", err, out)
	}
	info, err := client.ReadDaemonFile(home)
	if err != nil || info.PID == 999999 || !client.ProcessAlive(info.PID) {
		t.Fatalf("no new daemon: %+v %v", info, err)
	}
	t.Cleanup(func() { exec.Command(albedoBin, "--home", home, "stop").Run() })
	out, err = exec.Command(albedoBin, "--home", home, "stop").CombinedOutput()
	if err != nil || client.ProcessAlive(info.PID) {
		t.Fatalf("stop: %v %s", err, out)
	}
}

// A daemon whose daemon.json was removed is still found: status waits for
// the daemon to write it again (it does within a second) instead of
// starting a second one, and stop finds it through the lock.
func TestDaemonFileRemovedWhileRunning(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	d := startDaemon(t, home)
	pid := d.cmd.Process.Pid
	file := filepath.Join(home, client.DaemonFile)
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if out := cli(t, home, "status"); !strings.Contains(out, fmt.Sprintf("daemon pid %d", pid)) ||
		!strings.Contains(out, "(version "+binaryVersion(t)+",") || !strings.Contains(out, "\n0 sessions\n") {
		t.Fatalf("status with daemon.json removed: %s", out)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("daemon.json not written again: %v", err)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if out := cli(t, home, "stop"); !strings.Contains(out, fmt.Sprintf("stopped daemon pid %d", pid)) {
		t.Fatalf("stop with daemon.json removed: %s", out)
	}
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon still runs after stop")
	}
}

// Every log line names the node (--node, by default host name and pid).
func TestDaemonLogsNameTheNode(t *testing.T) {
	parallel(t)
	d := startDaemon(t, t.TempDir(), "--node", "alpha")
	d.stop()
	for _, l := range strings.Split(strings.TrimSpace(d.log.String()), "\n") {
		if !strings.Contains(l, "node=alpha") {
			t.Fatalf("a log line without the node: %q", l)
		}
	}
	host, _ := os.Hostname()
	d2 := startDaemon(t, t.TempDir())
	d2.stop()
	if want := fmt.Sprintf("node=%s-%d", host, d2.cmd.Process.Pid); !strings.Contains(d2.log.String(), want) {
		t.Fatalf("the default node is not %s:\n%s", want, d2.log)
	}
}
