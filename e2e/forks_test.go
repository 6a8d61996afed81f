//go:build !e2e_only || e2e_core

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"albedo/wire"
)

// albedo fork and albedo forks: the fork's export is the parent's first
// events, byte for byte; and a daemon killed while forks are being made
// leaves, after its restart, only whole forks: each listed, each the
// parent's prefix, none half made.
func TestCLIForkAndAKillDuringForks(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "orig"})
	for _, text := range []string{"first", "second"} {
		if _, err := fx.c.PutInput(fx.ctx, "orig", uuid.NewString(), text); err != nil {
			t.Fatal(err)
		}
	}
	at := closedTurn(waitTurnsClosed(t, fx.ctx, fx.c, "orig", 2), 1)
	id := strings.TrimSpace(cli(t, fx.home, "fork", "orig", "--at", fmt.Sprint(at), "--title", "the fork"))
	var a, b exported
	if err := json.Unmarshal([]byte(cli(t, fx.home, "export", "orig", "--format", "json")), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(cli(t, fx.home, "export", id, "--format", "json")), &b); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a.Events[:at])
	jb, _ := json.Marshal(b.Events)
	if string(ja) != string(jb) || b.Session.Parent == nil || b.Session.Parent.Session != "orig" || b.Session.Title != "the fork" {
		t.Fatalf("the fork's export: %+v\n%s\nthe parent's first %d:\n%s", b.Session, jb, at, ja)
	}
	if md := cli(t, fx.home, "export", id); !strings.Contains(md, fmt.Sprintf("- forked from: `orig` at #%d", at)) {
		t.Fatalf("the fork's Markdown export does not say where it came from:\n%s", md)
	}
	if out := cli(t, fx.home, "forks", "orig"); !strings.Contains(out, id) || !strings.Contains(out, "the fork") {
		t.Fatalf("albedo forks:\n%s", out)
	}
	_, stderr, code := cliRun(t, fx.home, "", "fork", "orig")
	wantExit(t, "a fork with no --at", stderr, code, 2, "--at")

	// Forks made as fast as they go while the daemon is killed.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := fx.c.Fork(fx.ctx, "orig", wire.ForkRequest{At: int64(1 + (w+i)%8), Title: fmt.Sprint("k", w, i)}); err != nil {
					return
				}
			}
		})
	}
	for n := 0; n < 20; {
		forks, err := fx.c.Forks(fx.ctx, "orig")
		if err != nil {
			t.Fatal(err)
		}
		n = len(forks)
	}
	fx.d.kill()
	close(stop)
	wg.Wait()
	fx.d = startDaemon(t, fx.home)
	forks, err := fx.c.Forks(fx.ctx, "orig")
	if err != nil || len(forks) < 20 {
		t.Fatalf("forks after the kill: %d, %v", len(forks), err)
	}
	orig := pageEventsOf(t, fx, "orig")
	for _, f := range forks {
		got := pageEventsOf(t, fx, f.ID)
		at := int(f.Parent.Offset)
		if len(got) < at || strings.Join(got[:at], "\n") != strings.Join(orig[:at], "\n") || int64(len(got)) != f.Head {
			t.Fatalf("fork %s (at %d, head %d) after the kill:\n%s", f.ID, at, f.Head, strings.Join(got, "\n"))
		}
	}
}
