package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// restartable is a target whose clients survive a server restart with
// their own library's reconnect and recovery logic.
type restartable interface {
	target
	// follow opens one reconnecting client subscribed to channels, each
	// from its start; onAttach is called with a channel's index each time
	// it is subscribed (again), onEvent with every delivered event's
	// channel index and offset (dense from 1 on albedo and centrifuge).
	follow(ctx context.Context, channels []string, onAttach func(i int), onEvent func(i int, offset int64)) (func(), error)
	// restart takes the server away from every client and brings it back
	// (kill: without a goodbye); it returns when the server accepts again.
	restart(ctx context.Context, kill bool, down time.Duration) error
}

// reattach: C clients each follow K channels with the target's own client
// library; every channel gets one event ("before"); the server is
// restarted; 16 publishers then put one more event into every channel.
// Measures, from the moment the restart begins, when the server accepts
// again, when 50/95/100 % of channels are subscribed again, when the last
// catch-up event was acknowledged, and when 50/95/100 % of channels have
// received it; counts gaps and duplicates by offset.
//
// albedo restarts its process (stop, or SIGKILL, then start) and keeps
// everything in SQLite. centrifuge's history lives in its process, so its
// "restart" keeps the process: it drops every connection and refuses new
// ones for -down, which is the most favourable restart it can have.
func reattach(ctx context.Context, c config, t target, out map[string]float64) error {
	rt, ok := t.(restartable)
	if !ok {
		return fmt.Errorf("reattach: target %s cannot restart", c.target)
	}
	nch := c.conns * c.per
	chans := make([]string, nch)
	for i := range chans {
		var err error
		if chans[i], err = t.channel(ctx, fmt.Sprintf("re-%d-%s", i, uuid.NewString()[:6])); err != nil {
			return err
		}
	}

	w := newWatch(nch)
	defer w.close()
	if err := w.follow(ctx, rt, chans, c.per); err != nil {
		return err
	}
	if err := publishAll(ctx, t, chans, "before"); err != nil {
		return err
	}
	if err := waitN(ctx, w.attached, nch, "channels got their first event"); err != nil {
		return err
	}

	start := time.Now()
	w.restarted.Store(true)
	if err := rt.restart(ctx, c.kill, c.down); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	out["back s"] = time.Since(start).Seconds()
	if err := publishAll(ctx, t, chans, "after"); err != nil {
		return err
	}
	out["published s"] = time.Since(start).Seconds()

	caughtAt, err := collect(ctx, w.caught, nch, start, "channels caught up")
	if err != nil {
		return err
	}
	// Every channel that caught up was attached again before; a second
	// attach of one channel (a client that reconnected twice) is the rare
	// case this count does not distinguish.
	attachedAt, err := collect(ctx, w.reattached, nch, start, "channels reattached")
	if err != nil {
		return err
	}
	for _, p := range []int{50, 95, 100} {
		i := min(nch*p/100, nch-1)
		out[fmt.Sprintf("reattached %d%% s", p)] = attachedAt[i].Seconds()
		out[fmt.Sprintf("caught up %d%% s", p)] = caughtAt[i].Seconds()
	}
	out["gaps"] = float64(w.gaps.Load())
	out["duplicates"] = float64(w.dups.Load())
	return nil
}

// watch is what reattach sees of its followers: each channel's last
// offset (one client delivers each), gaps and duplicates by offset, and
// when channels attach and catch up.
type watch struct {
	gaps, dups atomic.Int64
	last       []atomic.Int64
	attached   chan struct{}  // a channel got its first event
	caught     chan time.Time // a channel got its second (after the restart)
	restarted  atomic.Bool
	reattached chan time.Time // a client attached again after the restart
	closers    []func()
}

func newWatch(nch int) *watch {
	return &watch{last: make([]atomic.Int64, nch), attached: make(chan struct{}, nch),
		caught: make(chan time.Time, nch), reattached: make(chan time.Time, 2*nch)}
}

// follow opens one following client for every per channels.
func (w *watch) follow(ctx context.Context, rt restartable, chans []string, per int) error {
	for base := 0; base < len(chans); base += per {
		f, err := rt.follow(ctx, chans[base:base+per], func(int) {
			if w.restarted.Load() {
				select {
				case w.reattached <- time.Now():
				default: // more reattaches than the buffer: only the first count
				}
			}
		}, func(j int, off int64) { w.event(base+j, off) })
		if err != nil {
			return fmt.Errorf("client %d: %w", base/per, err)
		}
		w.closers = append(w.closers, f)
	}
	return nil
}

// event records that channel k delivered offset off.
func (w *watch) event(k int, off int64) {
	prev := w.last[k].Swap(off)
	switch {
	case off <= prev:
		w.dups.Add(1)
	case off > prev+1:
		w.gaps.Add(1)
	}
	switch off {
	case 1:
		w.attached <- struct{}{}
	case 2:
		w.caught <- time.Now()
	}
}

func (w *watch) close() {
	for _, f := range w.closers {
		f()
	}
}

// publishAll puts one event with text into every channel from 16
// publishers, so that making the events takes as little of the measured
// time as the server allows.
func publishAll(ctx context.Context, t target, chans []string, text string) error {
	const n = 16
	pubs, closePubs, err := openPublishers(ctx, t, n)
	defer closePubs()
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for p, pub := range pubs {
		wg.Go(func() {
			for i := p; i < len(chans); i += n {
				if err := pub(ctx, chans[i], text); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// collect receives n times from ch within a minute and returns them as
// sorted durations since start.
func collect(ctx context.Context, ch <-chan time.Time, n int, start time.Time, what string) ([]time.Duration, error) {
	var ds []time.Duration
	timeout := time.After(60 * time.Second)
	for len(ds) < n {
		select {
		case at := <-ch:
			ds = append(ds, at.Sub(start))
		case <-timeout:
			return nil, fmt.Errorf("only %d of %d %s in 60 s", len(ds), n, what)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	slices.Sort(ds)
	return ds, nil
}

// waitN receives n values from ch within a minute.
func waitN[T any](ctx context.Context, ch <-chan T, n int, what string) error {
	timeout := time.After(60 * time.Second)
	for got := 0; got < n; got++ {
		select {
		case <-ch:
		case <-timeout:
			return fmt.Errorf("only %d of %d %s in 60 s", got, n, what)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
