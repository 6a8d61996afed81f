package client

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"albedo/wire"
)

// A stream's hello rides in the upgrade's request, and what changed among
// its subscriptions while the dial was under way follows it: a session
// dropped is unsubscribed, one turned from background to watched is
// watched, one added is subscribed. Here the daemon holds the upgrade
// until the changes are made; before adopt sent them, the added session
// was never subscribed on that connection (its subscribe found no
// connection, and the hello said the stream as it was before the dial).
func TestAHelloInTheUpgradeCarriesWhatChangedDuringTheDial(t *testing.T) {
	upgrading, gate := make(chan struct{}, 1), make(chan struct{})
	var early atomic.Bool
	h, url := inProcess(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/ws" {
				early.Store(r.Header.Get(wire.HelloHeader) != "")
				select {
				case upgrading <- struct{}{}:
				default:
				}
				<-gate
			}
			next.ServeHTTP(w, r)
		})
	})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := New(Options{URL: url, Token: "owner-token"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if _, err := c.CreateSession(ctx, id, wire.SessionCreate{}); err != nil {
			t.Fatal(err)
		}
	}
	st := c.Stream(StreamOptions{})
	defer st.Close()
	a := st.Subscribe("a", Cursor{})
	b := st.SubscribeBackground("b", Cursor{})
	select {
	case <-upgrading:
	case <-ctx.Done():
		t.Fatal("no upgrade")
	}
	a.Close()
	b.Watch(true)
	sc := st.Subscribe("c", Cursor{})
	close(gate)

	viewers := func(id string) int {
		s, err := h.Status(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return s.Viewers
	}
	for viewers("c") != 1 || viewers("b") != 1 {
		select {
		case <-ctx.Done():
			t.Fatalf("viewers a %d, b %d, c %d; want b and c watched", viewers("a"), viewers("b"), viewers("c"))
		case <-time.After(10 * time.Millisecond):
		}
	}
	if n := viewers("a"); n != 0 {
		t.Fatalf("a, dropped during the dial, has %d viewers", n)
	}
	if !early.Load() {
		t.Fatalf("the upgrade carried no %s", wire.HelloHeader)
	}
	if _, err := c.PutInput(ctx, "c", "00000000-0000-7000-8000-000000000001", "to c"); err != nil {
		t.Fatal(err)
	}
	for {
		it, err := sc.Next(ctx)
		if err != nil {
			t.Fatalf("c's subscription: %v", err)
		}
		if it.Op == wire.PushEvent && it.Event.Text == "to c" {
			return
		}
	}
}
