//go:build !e2e_only || e2e_core

package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLoadToolSmoke keeps bench/ (its own module, which `go test ./...`
// does not build) from rotting: it builds the load tool, the centrifuge
// peer and the bare websocket floor, and runs small versions of the
// scenarios bench/run depends on against a real daemon and real peers. Numbers are not asserted, only
// what must hold at any speed: no event lost, no gap, no duplicate.
func TestLoadToolSmoke(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", dir+"/", "./cmd/albedo-bench", "./peers/centrifuge", "./peers/wsbroadcast")
	build.Dir = filepath.Join("..", "bench")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build bench/: %v\n%s", err, out)
	}
	bench := filepath.Join(dir, "albedo-bench")
	run := func(args ...string) map[string]float64 {
		t.Helper()
		out, err := exec.Command(bench, append([]string{"-json"}, args...)...).Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("albedo-bench %v: %v\n%s", args, err, stderr)
		}
		var r struct{ Values map[string]float64 }
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("albedo-bench %v printed %q: %v", args, out, err)
		}
		return r.Values
	}
	exactlyOnce := func(what string, v map[string]float64) {
		t.Helper()
		if v["gaps"] != 0 || v["duplicates"] != 0 || v["caught up 100% s"] <= 0 {
			t.Errorf("%s: %v", what, v)
		}
	}

	home := t.TempDir()
	startDaemon(t, home)
	stopOnCleanup(t, home) // reattach leaves a daemon it started itself
	albedo := []string{"-target", "albedo", "-home", home, "-albedo", albedoBin}

	v := run(append(albedo, "-scenario", "fanout", "-viewers", "3", "-duration", "300ms")...)
	if v["lost"] != 0 || v["deliveries"] < 3 || v["deliveries"] != 3*v["published"] {
		t.Errorf("albedo fanout: %v", v)
	}
	exactlyOnce("albedo reattach", run(append(albedo, "-scenario", "reattach", "-conns", "4", "-per", "3")...))
	// More connections than the process may hold open: refused at once,
	// naming the limit, not a run that hangs on failing dials.
	if _, err := exec.LookPath("prlimit"); err == nil {
		out, err := exec.Command("prlimit", append([]string{"--nofile=256", bench}, append(albedo, "-scenario", "idle", "-conns", "1000")...)...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "RLIMIT_NOFILE") || !strings.Contains(string(out), "may hold 256") {
			t.Errorf("idle past the fd limit: %v\n%s", err, out)
		}
	}
	exactlyOnce("albedo reattach -kill", run(append(albedo, "-scenario", "reattach", "-conns", "4", "-per", "3", "-kill")...))
	crowd := []string{"-scenario", "crowd", "-conns", "12", "-per", "3", "-per-proc", "5", "-rounds", "2", "-rate", "10", "-duration", "300ms"}
	wholeCrowd(t, "albedo crowd", run(append(albedo, crowd...)...))

	// The floor: a crowd through the tool's lean websocket client.
	ws := []string{"-target", "ws", "-url", "ws://127.0.0.1:" + startPeer(t, filepath.Join(dir, "wsbroadcast")) + "/", "-pid", "0"}
	v = run(append(ws, crowd...)...)
	if v["failed connections"] != 0 || v["broadcast missing"] != 0 || v["steady delivered share"] != 1 {
		t.Errorf("ws crowd: %v", v)
	}

	// The centrifuge peer, restarted the way bench/run restarts it.
	p := startPeer(t, filepath.Join(dir, "centrifuge"))
	cf := []string{"-target", "centrifuge", "-url", "ws://127.0.0.1:" + p + "/connection/websocket", "-pid", "0"}
	if v := run(append(cf, "-scenario", "fanout", "-viewers", "3", "-duration", "300ms")...); v["lost"] != 0 || v["deliveries"] < 3 {
		t.Errorf("centrifuge fanout: %v", v)
	}
	exactlyOnce("centrifuge reattach", run(append(cf, "-scenario", "reattach", "-conns", "4", "-per", "3", "-down", "100ms")...))
	wholeCrowd(t, "centrifuge crowd", run(append(cf, append(crowd, "-down", "100ms")...)...))
}

// wholeCrowd fails t unless a crowd run (three workers of at most five of
// its twelve connections) connected all, delivered every broadcast and
// every steady event to every connection, and, after the storm, had every
// one back and caught up, with no gap and no duplicate.
func wholeCrowd(t *testing.T, what string, v map[string]float64) {
	t.Helper()
	if v["workers"] != 3 || v["failed connections"] != 0 || v["connect per s"] <= 0 ||
		v["broadcast missing"] != 0 || v["broadcast p99 ms"] <= 0 || v["steady delivered share"] != 1 ||
		v["storm missing"] != 0 || v["storm caught up all s"] <= 0 || v["gaps"] != 0 || v["duplicates"] != 0 {
		t.Errorf("%s: %v", what, v)
	}
}

// startPeer starts a peer server of bench/peers and returns the port it
// says it listens on; it is killed when t ends.
func startPeer(t *testing.T, bin string) string {
	t.Helper()
	peer := exec.Command(bin)
	stdout, err := peer.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	peer.Stderr = os.Stderr
	if err := peer.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Process.Kill(); peer.Wait() })
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "listening" {
				port <- f[2]
			}
		}
	}()
	select {
	case p := <-port:
		return p
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not say where it listens", filepath.Base(bin))
		return ""
	}
}
