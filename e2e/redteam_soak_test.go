//go:build !e2e_only || e2e_soak

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"albedo/wire"
)

// The red team's floods at once, under 512 files: a read link's 200
// websockets, 600 connections sending their headers a byte at a time,
// 20 websockets that never read a busy session, and a member's costly
// searches without pause, while the owner writes to that session. The
// owner's requests, each on a new connection, are served within the
// bound throughout, and the daemon's memory grows by less than 64 MiB
// (four times that for a build with the race detector).
//
// Like the flood test it holds a bound on time, so it runs alone; the
// bound is 2 s for what takes a few hundred milliseconds alone.
func TestRedTeamFloodsLeaveTheOwnerServed(t *testing.T) {
	skipShort(t, "the red team's floods")
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("needs prlimit (util-linux)")
	}
	home := t.TempDir()
	// RSS is measured as growth: without the collector's floor, heap the
	// daemon fills whatever it is sent.
	d := startDaemonUnder(t, home, []string{"prlimit", "--nofile=512:512", "--"}, "--metrics-addr", "127.0.0.1:0", "--gc-floor-bytes", "0")
	c := newClient(t, home)
	ctx := ctxT(t)
	busy, err := c.CreateSession(ctx, "busy", wire.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateSession(ctx, "quiet", wire.SessionCreate{}); err != nil {
		t.Fatal(err)
	}
	link, err := c.ShareLink(ctx, busy.ID, wire.LinkCreate{Label: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	mia, err := c.AddMember(ctx, "mia", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Grant(ctx, "quiet", "mia", wire.AccessRead); err != nil {
		t.Fatal(err)
	}
	snap := c.Snapshot()
	base, wsURL := snap.BaseURL, strings.Replace(snap.BaseURL, "http://", "ws://", 1)+"/v1/ws"
	addr := strings.TrimPrefix(base, "http://")
	for i := range 200 { // words for the searches to match
		if _, err := c.PutInput(ctx, busy.ID, uuid.Must(uuid.NewV7()).String(), fmt.Sprintf("alpha bravo charlie delta echo %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	before := rssMiB(t, d.cmd.Process.Pid)

	fctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	hello := wire.Encode(wire.Command{ID: 1, Op: wire.OpHello, Subs: []wire.Sub{{Session: busy.ID}}})
	for range 200 { // the link's websockets: its share is held, the rest refused
		wg.Go(func() {
			ws, _, err := websocket.Dial(fctx, wsURL, &websocket.DialOptions{
				HTTPHeader: http.Header{"Authorization": {"Bearer " + link.Token}}, Subprotocols: []string{wire.Subprotocol}})
			if err != nil {
				return
			}
			defer ws.CloseNow()
			if ws.Write(fctx, websocket.MessageText, hello) != nil {
				return
			}
			for {
				if _, _, err := ws.Read(fctx); err != nil {
					return
				}
			}
		})
	}
	for range 20 { // non-readers of the busy session
		wg.Go(func() {
			ws, _, err := websocket.Dial(fctx, wsURL, &websocket.DialOptions{
				HTTPHeader: http.Header{"Authorization": {"Bearer " + link.Token}}, Subprotocols: []string{wire.Subprotocol}})
			if err != nil {
				return
			}
			defer ws.CloseNow()
			ws.Write(fctx, websocket.MessageText, hello)
			<-fctx.Done()
		})
	}
	for range 600 {
		wg.Go(func() { slowHeaders(fctx, addr) })
	}
	q := url.QueryEscape("a* b* c* d* e* f* g* h* i* j* k* l* m* n* o* p*")
	for range 2 { // a member's searches of what they may not read
		wg.Go(func() {
			for fctx.Err() == nil {
				req, _ := http.NewRequestWithContext(fctx, http.MethodGet, base+"/v1/search?q="+q, nil)
				req.Header.Set("Authorization", "Bearer "+mia.Token)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}
		})
	}
	wg.Go(func() { // the owner writes to the busy session
		for i := 0; fctx.Err() == nil; i++ {
			c.PutInput(fctx, busy.ID, uuid.Must(uuid.NewV7()).String(), fmt.Sprintf("foxtrot golf %d", i))
			select {
			case <-fctx.Done():
			case <-time.After(20 * time.Millisecond): // a writer's pace
			}
		}
	})

	owner := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var worst time.Duration
	peak := before
	requests := 0
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); requests++ {
		began := time.Now()
		rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, base+"/v1/sessions", nil)
		req.Header.Set("Authorization", "Bearer "+snap.Token)
		resp, err := owner.Do(req)
		cancel()
		if err != nil {
			t.Fatalf("the owner's request %d in the floods: %v", requests+1, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the owner's request: %s", resp.Status)
		}
		worst = max(worst, time.Since(began))
		peak = max(peak, rssMiB(t, d.cmd.Process.Pid))
		if wait := 100*time.Millisecond - time.Since(began); wait > 0 {
			time.Sleep(wait) // the owner's pace, not a synchronisation
		}
	}
	t.Logf("%d owner requests in the floods: worst %v; RSS %.0f MiB before, %.0f at most", requests, worst, before, peak)
	if worst > 2*time.Second {
		t.Errorf("an owner's request took %v in the floods, want well within 2 s", worst)
	}
	limit := 64.0
	if daemonRace {
		limit *= 4 // the race detector's shadow memory: 18 MiB of growth without it was 79 with it
	}
	if grew := peak - before; grew > limit {
		t.Errorf("the daemon's RSS grew by %.0f MiB in the floods, want under %.0f", grew, limit)
	}
}
