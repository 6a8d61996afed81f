package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// latencies collects delivery latencies per viewer (no shared lock on the
// hot path) and summarises them.
type latencies struct{}

func (l *latencies) recorder() *[]time.Duration { return new([]time.Duration) }

func (l *latencies) summary(parts []*[]time.Duration, out map[string]float64) {
	var all []time.Duration
	for _, p := range parts {
		all = append(all, *p...)
	}
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	out["latency p50 ms"] = ms(all[len(all)/2])
	out["latency p99 ms"] = ms(all[len(all)*99/100])
	out["latency max ms"] = ms(all[len(all)-1])
}

// fanout: one channel, one publisher, N viewers. With -rate 0 the
// publisher sends as fast as the server takes messages (16 in flight);
// otherwise at that rate. Measures deliveries/s, latency, server CPU per
// delivery, server RSS.
func fanout(ctx context.Context, c config, t target, out map[string]float64) error {
	ch, err := t.channel(ctx, "fanout-"+uuid.NewString()[:8])
	if err != nil {
		return err
	}
	var delivered atomic.Int64
	vs, err := openViewers(ctx, c.viewers, t, ch, &delivered)
	defer vs.close()
	if err != nil {
		return err
	}
	pub, closePub, err := t.publisher(ctx)
	if err != nil {
		return err
	}
	defer closePub()

	cpu0, load0, start := procsCPU(t.pids()), procCPU(os.Getpid()), time.Now()
	broker0, store0 := treeCPU(c.brokerPID), treeCPU(c.storePID)
	sent := publishStamped(ctx, c, pub, ch)
	want := sent * int64(c.viewers)
	settle(delivered.Load, want)
	elapsed := time.Since(start)
	cpu := procsCPU(t.pids()) - cpu0
	broker, store := treeCPU(c.brokerPID)-broker0, treeCPU(c.storePID)-store0
	// The load generator's own CPU: near 100 % it, not the server, is
	// what the deliveries/s measure.
	out["load generator cpu %"] = (procCPU(os.Getpid()) - load0) / float64(elapsed.Microseconds()) * 100
	n := delivered.Load()
	out["published"] = float64(sent)
	out["deliveries"] = float64(n)
	out["lost"] = float64(want - n)
	out["deliveries/s"] = float64(n) / elapsed.Seconds()
	if n > 0 {
		out["server cpu µs/delivery"] = cpu / float64(n)
		if c.brokerPID > 0 {
			out["broker cpu µs/delivery"] = broker / float64(n)
		}
		if c.storePID > 0 {
			out["store cpu µs/delivery"] = store / float64(n)
		}
	}
	out["server rss MiB"] = procsRSS(t.pids()) / (1 << 20)
	vs.summary(out)
	if n := c.nodes(); n > 1 {
		vs.byNode(n, out)
	}
	return nil
}

// viewers are fanout's connections, each with its own latency record.
type viewers struct {
	lat    latencies
	parts  []*[]time.Duration
	mus    []*sync.Mutex
	closes []func()
}

// openViewers opens n viewers of ch; each delivery of a stamped message
// counts in delivered and records its latency. Close them even on error.
func openViewers(ctx context.Context, n int, t target, ch string, delivered *atomic.Int64) (*viewers, error) {
	vs := &viewers{}
	for range n {
		rec, mu := vs.lat.recorder(), &sync.Mutex{}
		vs.parts, vs.mus = append(vs.parts, rec), append(vs.mus, mu)
		closeFn, err := t.viewer(ctx, []string{ch}, func(_, text string) {
			if ts, ok := unstamp(text); ok {
				d := time.Since(ts)
				mu.Lock()
				*rec = append(*rec, d)
				mu.Unlock()
				delivered.Add(1)
			}
		})
		if err != nil {
			return vs, fmt.Errorf("viewer: %w", err)
		}
		vs.closes = append(vs.closes, closeFn)
	}
	return vs, nil
}

func (vs *viewers) close() {
	for _, f := range vs.closes {
		f()
	}
}

// summary writes the latency percentiles of every viewer's deliveries.
func (vs *viewers) summary(out map[string]float64) {
	for _, mu := range vs.mus {
		mu.Lock()
		defer mu.Unlock()
	}
	vs.lat.summary(vs.parts, out)
}

// byNode writes the latency percentiles of the viewers on the first node
// (the publisher's) and of those on the others, viewer i having been
// opened on node i mod n.
func (vs *viewers) byNode(n int, out map[string]float64) {
	for _, mu := range vs.mus {
		mu.Lock()
		defer mu.Unlock()
	}
	var first, others []*[]time.Duration
	for i, p := range vs.parts {
		if i%n == 0 {
			first = append(first, p)
		} else {
			others = append(others, p)
		}
	}
	for _, g := range []struct {
		name  string
		parts []*[]time.Duration
	}{{"first node", first}, {"other nodes", others}} {
		m := map[string]float64{}
		vs.lat.summary(g.parts, m)
		for k, v := range m {
			if k != "latency max ms" {
				out[k+", "+g.name] = v
			}
		}
	}
}

// publishFunc sends one message and returns once the server has taken it.
type publishFunc func(ctx context.Context, channel, text string) error

// openPublishers opens n publishers, each on its own connection. Call the
// func it returns to close them, even when it fails part-way.
func openPublishers(ctx context.Context, t target, n int) ([]publishFunc, func(), error) {
	var pubs []publishFunc
	var closes []func()
	closeAll := func() {
		for _, f := range closes {
			f()
		}
	}
	for range n {
		pub, closePub, err := t.publisher(ctx)
		if err != nil {
			return nil, closeAll, err
		}
		pubs, closes = append(pubs, pub), append(closes, closePub)
	}
	return pubs, closeAll, nil
}

// publishStamped publishes time-stamped messages to ch for c.duration, at
// c.rate a second or, with rate 0, as fast as the server takes them
// (c.window at a time, 16 unless -window says), and returns how many the
// server took.
func publishStamped(ctx context.Context, c config, pub publishFunc, ch string) int64 {
	var sent atomic.Int64
	stop := time.Now().Add(c.duration)
	var wg sync.WaitGroup
	if c.rate > 0 {
		// On a clock: each publish on its own goroutine (at most 64 in
		// flight), so a slow acknowledgement does not slow the rate. The
		// n-th publish is due at start + n/rate; one that comes due while
		// the tool is busy goes out as soon as it can rather than being
		// skipped (a time.Ticker drops the ticks its reader misses, so a
		// busy tool would publish below the rate asked for, and less the
		// busier it is).
		start := time.Now()
		sem := make(chan struct{}, 64)
		for n := 0; ctx.Err() == nil; n++ {
			due := start.Add(time.Duration(n) * time.Second / time.Duration(c.rate))
			if !due.Before(stop) {
				break
			}
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if pub(ctx, ch, stamp()) == nil {
					sent.Add(1)
				}
			})
		}
		wg.Wait()
		return sent.Load()
	}
	window := c.window
	if window <= 0 {
		window = 16
	}
	for range window {
		wg.Go(func() {
			for time.Now().Before(stop) && ctx.Err() == nil {
				if pub(ctx, ch, stamp()) != nil {
					return
				}
				sent.Add(1)
			}
		})
	}
	wg.Wait()
	return sent.Load()
}

// settle waits, at most 10 s, until have reaches want: for the deliveries
// of what was published to land. Benchmark code: it polls.
func settle(have func() int64, want int64) {
	deadline := time.Now().Add(10 * time.Second)
	for have() < want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

// idle: N connections, each subscribed to its own K channels, doing
// nothing (with -shared, all on the same K: then every join is also a
// presence change for everyone). Measures server RSS per connection and
// idle CPU over 5 s.
func idle(ctx context.Context, c config, t target, out map[string]float64) error {
	nch := c.per
	if !c.shared {
		nch = c.per * c.conns
	}
	chans := make([]string, nch)
	for i := range chans {
		var err error
		if chans[i], err = t.channel(ctx, fmt.Sprintf("idle-%d-%s", i, uuid.NewString()[:6])); err != nil {
			return err
		}
	}
	runtime.GC()
	rss0 := procsRSS(t.pids())
	var closers []func()
	defer func() {
		for _, f := range closers {
			f()
		}
	}()
	for i := range c.conns {
		mine := chans[:c.per]
		if !c.shared {
			mine = chans[i*c.per : (i+1)*c.per]
		}
		f, err := t.viewer(ctx, mine, func(string, string) {})
		if err != nil {
			return fmt.Errorf("connection %d: %w", len(closers), err)
		}
		closers = append(closers, f)
	}
	time.Sleep(2 * time.Second) // let the server settle: this is a measurement, not a sync
	rss1 := procsRSS(t.pids())
	cpu0 := procsCPU(t.pids())
	time.Sleep(5 * time.Second)
	out["rss per connection KiB"] = (rss1 - rss0) / float64(c.conns) / 1024
	out["server rss MiB"] = rss1 / (1 << 20)
	out["idle cpu %"] = (procsCPU(t.pids()) - cpu0) / 5e6 * 100
	return nil
}

// multiplex (albedo): one connection watches S sessions while one of them
// floods; the quiet ones get one event every 100 ms each. Measures the
// quiet sessions' latency and the share of their events delivered.
func multiplex(ctx context.Context, c config, t target, out map[string]float64) error {
	if _, ok := t.(*albedoTarget); !ok {
		return fmt.Errorf("multiplex runs against albedo only")
	}
	chans := make([]string, c.sessions)
	for i := range chans {
		var err error
		if chans[i], err = t.channel(ctx, fmt.Sprintf("mux-%d-%s", i, uuid.NewString()[:6])); err != nil {
			return err
		}
	}
	flood := chans[0]
	var quiet, flooded atomic.Int64
	var lat latencies
	rec := lat.recorder()
	var mu sync.Mutex
	closeFn, err := t.viewer(ctx, chans, func(ch, text string) {
		if ch == flood {
			flooded.Add(1)
			return
		}
		if ts, ok := unstamp(text); ok {
			mu.Lock()
			*rec = append(*rec, time.Since(ts))
			mu.Unlock()
			quiet.Add(1)
		}
	})
	if err != nil {
		return err
	}
	defer closeFn()
	pub, closePub, err := t.publisher(ctx)
	if err != nil {
		return err
	}
	defer closePub()
	stop := time.Now().Add(c.duration)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				if pub(ctx, flood, "flood") != nil {
					return
				}
			}
		}()
	}
	var sentQuiet atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for time.Now().Before(stop) {
			<-tick.C
			for _, ch := range chans[1:] {
				if pub(ctx, ch, stamp()) == nil {
					sentQuiet.Add(1)
				}
			}
		}
	}()
	wg.Wait()
	settle(quiet.Load, sentQuiet.Load())
	out["flood events delivered/s"] = float64(flooded.Load()) / c.duration.Seconds()
	out["quiet events sent"] = float64(sentQuiet.Load())
	out["quiet events delivered"] = float64(quiet.Load())
	mu.Lock()
	defer mu.Unlock()
	lat.summary([]*[]time.Duration{rec}, out)
	return nil
}

// persist (albedo): W writers, each on its own connection, post one message
// after another (each waits for its receipt: committed), or keep -window
// posts in flight each. Measures inputs/s.
func persist(ctx context.Context, c config, t target, out map[string]float64) error {
	switch t.(type) {
	case *albedoTarget, *jsTarget:
	default:
		return fmt.Errorf("persist runs against a durable target: albedo or jetstream")
	}
	chans := make([]string, c.writers)
	for w := range chans {
		var err error
		if chans[w], err = t.channel(ctx, fmt.Sprintf("persist-%d-%s", w, uuid.NewString()[:6])); err != nil {
			return err
		}
	}
	pubs, closePubs, err := openPublishers(ctx, t, c.writers)
	defer closePubs()
	if err != nil {
		return err
	}
	var done atomic.Int64
	var wg sync.WaitGroup
	cpu0 := procsCPU(t.pids())
	stop := time.Now().Add(c.duration)
	// Each writer keeps c.window posts in flight on its connection (one
	// unless -window says): the window's publishes share the socket.
	for w, pub := range pubs {
		for range max(c.window, 1) {
			wg.Go(func() {
				for time.Now().Before(stop) {
					if pub(ctx, chans[w], "persist") != nil {
						return
					}
					done.Add(1)
				}
			})
		}
	}
	wg.Wait()
	out["inputs/s"] = float64(done.Load()) / c.duration.Seconds()
	if n := done.Load(); n > 0 {
		out["server cpu µs/input"] = (procsCPU(t.pids()) - cpu0) / float64(n)
	}
	return nil
}
