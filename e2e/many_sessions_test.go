//go:build !e2e_only || e2e_web

package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/wire"
)

// manySessions makes n sessions through the daemon's API, several at a
// time (their creates share commits), and returns once all are made.
func manySessions(t *testing.T, fx *fixture, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	next := make(chan int)
	for range 32 {
		wg.Go(func() {
			for i := range next {
				if _, err := fx.c.CreateSession(fx.ctx, fmt.Sprintf("many-%05d", i), wire.SessionCreate{Title: fmt.Sprintf("many %d", i)}); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

// A person with twelve thousand sessions: the terminal and the page show
// the newest with its transcript, subscribe to a few sessions, not to
// each (their hello stays small), and both are back after the daemon
// stops and after it is killed, the newest session live again.
func TestTwelveThousandSessionsComeBack(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{})
	// Twelve thousand sessions take much of a minute to make on a busy
	// machine: this test has three.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fx.ctx = ctx
	manySessions(t, fx, 12000)
	if _, err := fx.c.CreateSession(fx.ctx, "newest", wire.SessionCreate{Title: "newest"}); err != nil {
		t.Fatal(err)
	}
	say := func(text string) {
		t.Helper()
		if _, err := fx.c.PutInput(fx.ctx, "newest", uuid.Must(uuid.NewV7()).String(), text); err != nil {
			t.Fatal(err)
		}
	}
	say("before the stop")
	u := startUIWith(t, fx.c, 120, 30, client.StreamOptions{Backoff: client.BackoffOptions{Cap: 300 * time.Millisecond}})
	u.waitFor("the newest open", func(s string) bool { return strings.Contains(s, "echo: before the stop") })
	p := startBrowser(t).tab()
	ws := p.recordSockets()
	p.navigate(ownerLink(t, fx.home, "newest"))
	p.waitOpen("newest")
	p.wait("its transcript", shownCommitted("echo: before the stop"))
	if n := eval[int](p, `albedo.client.subs.size`); n > 4 {
		t.Fatalf("the page follows %d subscriptions", n)
	}

	for i, down := range []func(){func() { fx.d.stop() }, func() { fx.d.kill() }} {
		down()
		fx.d = startDaemon(t, fx.home)
		start := time.Now()
		text := fmt.Sprintf("after restart %d", i)
		say(text)
		u.waitFor("the terminal back, live", func(s string) bool { return strings.Contains(s, "echo: "+text) })
		p.wait("the page back, live", shownCommitted("echo: "+text))
		t.Logf("restart %d: both live again %v after the daemon listened", i, time.Since(start).Round(time.Millisecond))
	}
	for _, h := range ws.sentOps(wire.OpHello) {
		if b := len(wire.Encode(h)); len(h.Subs) > 4 || b > 4<<10 {
			t.Fatalf("a hello of the page: %d subs, %d bytes", len(h.Subs), b)
		}
	}
}
