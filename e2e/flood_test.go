//go:build !e2e_only || e2e_core

package e2e

import (
	"context"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// A flood of connections that send their request's header a byte at a
// time (one every 2 s, far inside the header timeout) holds no more than
// the fresh connections' bound (64 under 512 files): at that bound, one
// accepted with part of a header and not its end is closed at once. The
// owner's requests, each on a new connection behind the flood in the
// listen queue, are served within a second throughout. Before, each such
// connection left the fresh bound at its first byte and held a place
// among the open connections for the whole header timeout: 1 200 of them
// kept the owner's requests in the listen queue for 16 s.
//
// It holds a bound on time, so it runs alone among the package's tests (it
// is not parallel). Alone on two cores, beside its 1 200 flooders, the
// owner's worst request takes about 300 ms; the bound, 2 s, leaves room
// for the other packages' tests that may run meanwhile, and is still far
// below the 16 s it took before.
func TestASlowHeaderFloodCannotHoldTheOwner(t *testing.T) {
	skipShort(t, "a flood of 1 200 connections")
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("needs prlimit (util-linux)")
	}
	home := t.TempDir()
	d := startDaemonUnder(t, home, []string{"prlimit", "--nofile=512:512", "--"}, "--metrics-addr", "127.0.0.1:0")
	metric := metricOf(t, d)
	c := newClient(t, home)
	ctx := ctxT(t)
	if _, err := c.Sessions(ctx); err != nil { // finds the daemon: its address and token
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(c.Snapshot().BaseURL, "http://")

	const flooders = 1200
	fctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	for range flooders {
		wg.Go(func() { slowHeaders(fctx, addr) })
	}

	// Once the daemon has shed the flood's first wave, the owner asks for
	// the session list on a new connection every 100 ms, for 8 s.
	for deadline := time.Now().Add(30 * time.Second); metric(`albedo_fresh_closed_total{why="partial"}`) < flooders; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the daemon did not shed the flood's first wave within 30 s")
		}
	}
	owner := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var took []time.Duration
	for end := time.Now().Add(8 * time.Second); time.Now().Before(end); {
		began := time.Now()
		rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, c.Snapshot().BaseURL+"/v1/sessions", nil)
		req.Header.Set("Authorization", "Bearer "+c.Snapshot().Token)
		resp, err := owner.Do(req)
		cancel()
		if err != nil {
			t.Fatalf("the owner's request %d in the flood: %v", len(took)+1, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the owner's request: %s", resp.Status)
		}
		took = append(took, time.Since(began))
		if wait := 100*time.Millisecond - time.Since(began); wait > 0 {
			time.Sleep(wait) // the owner's pace, not a synchronisation
		}
	}
	slices.Sort(took)
	worst := took[len(took)-1]
	t.Logf("%d owner requests beside %d slow-header flooders: median %v, worst %v", len(took), flooders, took[len(took)/2], worst)
	if worst > 2*time.Second {
		t.Fatalf("an owner's request took %v in a slow-header flood, want well within 2 s", worst)
	}

}
