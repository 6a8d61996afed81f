//go:build !e2e_only || e2e_core

package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"albedo/client"
	"albedo/wire"
)

// A daemon that listens on another address than 127.0.0.1 (here
// 127.0.0.2, loopback still) is reached by the commands of its home, and
// by any client of the home: daemon.json says where it listens.
func TestCommandsReachADaemonOnItsOwnAddress(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	startDaemon(t, home, "--listen", "127.0.0.2:0")
	info, err := client.ReadDaemonFile(home)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.URL, "http://127.0.0.2:") {
		t.Fatalf("daemon.json's url is %q, want the listener's address", info.URL)
	}
	cmd := exec.CommandContext(ctxT(t), albedoBin, "--home", home, "status")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "daemon pid") {
		t.Fatalf("status after %v: %v\n%s", time.Since(start), err, out)
	}
	c := newClient(t, home)
	if _, err := c.CreateSession(ctxT(t), "here", wire.SessionCreate{}); err != nil {
		t.Fatal(err)
	}
}
