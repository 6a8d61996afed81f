package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"albedo/client"
	"albedo/wire"
)

// home (albedo): a home of -sessions sessions of -events messages each,
// made once (a later run on the same home finds it made) through the
// import API, the way a restored export comes in. Then what a person
// who follows all of them meets:
//
//   - feed ms: a connection's hello and its feed's first page (200
//     sessions, by activity), median of 5;
//   - open ms: that, and the newest session's last 100 events, as a
//     client opening on it sees them, median of 5;
//   - terminal ms / page ms, heap MiB: the real terminal (on a simulated
//     screen) and the real page (headless Chromium, -chromium) until the
//     newest session's last message is drawn, and the page's JS heap;
//   - unseen core: the daemon's CPU, in cores, for a client that follows
//     the feed and shows one session, while -rate posts a second go into
//     other sessions: measured against no client at all, and set beside
//     the same client subscribed to every session in the background, as
//     clients followed a home before the feed (at most 10 000: the
//     limit of a connection);
//   - reattach s: the daemon SIGKILLed and started again; the time until
//     a client that follows the feed and shows the newest session has a
//     message posted there after the restart.
func home(ctx context.Context, c config, t target, out map[string]float64) error {
	a, ok := t.(*albedoTarget)
	if !ok {
		return fmt.Errorf("home: albedo only")
	}
	start := time.Now()
	ids, err := fillHome(ctx, a, c.sessions, c.events)
	if err != nil {
		return err
	}
	out["fill s"] = time.Since(start).Seconds()
	newest := ids[len(ids)-1]
	if err := postTo(ctx, a, newest, "the newest post"); err != nil { // it is the newest by activity now
		return err
	}
	if err := homeOpen(ctx, a, newest, c.events, out); err != nil {
		return err
	}
	if err := homeClients(ctx, a, newest, out); err != nil {
		return err
	}
	if c.chromium != "" {
		if err := homePage(ctx, a, c.chromium, newest, out); err != nil {
			return err
		}
	}
	if err := homeUnseen(ctx, c, a, ids, out); err != nil {
		return err
	}
	return homeReattach(ctx, a, newest, out)
}

// fillHome makes the home's sessions, unless a marker says a run made
// them already, and returns their ids, the newest last.
func fillHome(ctx context.Context, a *albedoTarget, n, events int) ([]string, error) {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("home-%05d", i)
	}
	marker := fmt.Sprintf("home-made-%d-%d", n, events)
	if _, err := a.c.Session(ctx, marker); err == nil {
		return ids, nil
	}
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	next := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range next {
				if err := importOne(ctx, a.c, ids[i], events); err != nil {
					failed.CompareAndSwap(nil, &err)
				}
			}
		})
	}
	for i := range ids {
		if failed.Load() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if p := failed.Load(); p != nil {
		return nil, *p
	}
	_, err := a.c.CreateSession(ctx, marker, wire.SessionCreate{Title: "made"})
	return ids, err
}

// postTo posts one message into session as the target's bot.
func postTo(ctx context.Context, a *albedoTarget, session, text string) error {
	pub, closePub, err := a.publisher(ctx)
	if err != nil {
		return err
	}
	defer closePub()
	return pub(ctx, session, text)
}

// importOne makes a session of n messages, person and model in turn.
func importOne(ctx context.Context, c *client.Client, id string, n int) error {
	s, err := c.CreateSession(ctx, id, wire.SessionCreate{Title: "home " + id})
	if err != nil || s.Head >= int64(n) {
		return err
	}
	evs := make([]wire.Event, n)
	at := time.Now().Add(-time.Hour)
	for i := range evs {
		role, author := wire.RoleUser, "bench"
		if i%2 == 1 {
			role, author = wire.RoleAssistant, "echo"
		}
		evs[i] = wire.Event{Offset: int64(i + 1), Type: wire.EventMessage, Role: role, Author: author,
			Text: fmt.Sprintf("message %d of %s: some words to make it a message of ordinary length, about a line", i+1, id), At: at.Add(time.Duration(i) * time.Second)}
	}
	_, err = c.ImportEvents(ctx, id, evs, true)
	return err
}

// homeOpen measures the feed's first page, and the newest session's
// window on top of it, on raw connections.
func homeOpen(ctx context.Context, a *albedoTarget, newest string, events int, out map[string]float64) error {
	var feedT, openT []time.Duration
	for range 5 {
		got := make(chan struct{}, 1)
		want := min(events, wire.DefaultWindow)
		var n atomic.Int64
		t0 := time.Now()
		rc, err := dialAlbedo(ctx, a.snap, a.snap.Token, func(line []byte) {
			if strings.HasPrefix(string(line), `{"op":"event"`) && n.Add(1) == int64(want) {
				got <- struct{}{}
			}
		})
		if err != nil {
			return err
		}
		if _, err := rc.call(ctx, wire.Command{Op: wire.OpHello, Client: "albedo-bench/1"}); err != nil {
			return err
		}
		r, err := rc.call(ctx, wire.Command{Op: wire.OpFeed, Limit: 200})
		if err != nil {
			return err
		}
		if r.Feed == nil || len(r.Feed.Sessions) == 0 || r.Feed.Sessions[0].ID != newest {
			return fmt.Errorf("the feed's first page does not start with %s", newest)
		}
		feedT = append(feedT, time.Since(t0))
		if _, err := rc.call(ctx, wire.Command{Op: wire.OpSub, Session: newest}); err != nil {
			return err
		}
		select {
		case <-got:
		case <-time.After(10 * time.Second):
			return fmt.Errorf("the newest session's window did not come")
		}
		openT = append(openT, time.Since(t0))
		rc.ws.CloseNow()
	}
	out["feed ms"] = medianMS(feedT)
	out["open ms"] = medianMS(openT)
	return nil
}

// medianMS is the median of ds in milliseconds.
func medianMS(ds []time.Duration) float64 {
	slices.Sort(ds)
	return float64(ds[len(ds)/2].Microseconds()) / 1000
}
