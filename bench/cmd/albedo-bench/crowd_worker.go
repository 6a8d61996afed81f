package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"albedo/client"
	"albedo/wire"
)

// The crowd scenario's connections live in worker processes (albedo-bench
// -crowd-worker), each under its own open-file limit: one process here
// may hold at most 20 000 files, nothing can raise that, and the crowd
// goes past it. The parent talks to its workers in JSON lines: a command
// on a worker's stdin, one reply on its stdout.

// workerCmd is a command from the parent.
type workerCmd struct {
	Cmd    string `json:"cmd"`     // connect, round, steady-begin, steady-end, storm-arm, storm-report, counts, quit
	Round  int    `json:"round"`   // round: the broadcast round
	WaitMS int    `json:"wait_ms"` // round, storm-report: how long to wait for every connection
	Start  int64  `json:"start_ns"`
	Node   int    `json:"node"` // storm-arm: the node the storm takes away
}

// workerReply answers one command (the first, unasked, says the worker's
// own sessions are made).
type workerReply struct {
	Err      string         `json:"err,omitempty"`
	ConnectS float64        `json:"connect_s,omitempty"`
	Failed   int            `json:"failed,omitempty"`
	Lat      []float64      `json:"lat_us,omitempty"` // round: one per connection that had it, sorted
	Missing  int            `json:"missing,omitempty"`
	Hist     []int64        `json:"hist,omitempty"` // steady: latencies (histBucket)
	Reattach []float64      `json:"reattach_us,omitempty"`
	Caught   []float64      `json:"caught_us,omitempty"`
	Gaps     int64          `json:"gaps,omitempty"`
	Dups     int64          `json:"dups,omitempty"`
	Errs     map[string]int `json:"errs,omitempty"`
}

// The text of a crowd's events says what they are for: "b3 t=…" is
// broadcast round 3, "s t=…" the steady rate, "x t=…" the event published
// during the storm.

// crowdWorker holds a worker's connections and what they saw.
type crowdWorker struct {
	n, per int
	first  int            // the index of its first connection in the crowd
	nodes  int            // how many nodes the crowd is spread over
	prev   []atomic.Int64 // conn*per+sub → last offset delivered (0: none yet)
	gaps   atomic.Int64
	dups   atomic.Int64

	mu       sync.Mutex
	rounds   map[int][]float64 // broadcast round → latencies (µs)
	steady   []int64           // histogram of the steady events' latencies, once begun
	armed    bool
	reattach []int64 // conn → when it was attached again after the arm (ns), 0: not yet, -1: not its node
	caught   []int64 // conn → when it had the storm's event (ns), 0: not yet
	changed  chan struct{}
	errs     map[string]int // failed attempts after the first, by kind
}

func (w *crowdWorker) failed(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.errs[errKind(err)]++
}

// errKind names an error for a count: its text without the numbers that
// differ from one connection to the next.
func errKind(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && len(s)-i < 80 {
		s = s[i+2:]
	}
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return '#'
		}
		return r
	}, s)
}

func count(ts []int64, v int64) int {
	n := 0
	for _, t := range ts {
		if t == v {
			n++
		}
	}
	return n
}

func (w *crowdWorker) attached(conn int) {
	w.mu.Lock()
	if w.armed && w.reattach[conn] == 0 {
		w.reattach[conn] = time.Now().UnixNano()
		w.poke()
	}
	w.mu.Unlock()
}

func (w *crowdWorker) event(conn, sub int, off int64, text string, at time.Time) {
	if off > 0 {
		prev := w.prev[conn*w.per+sub].Swap(off)
		switch {
		case prev == 0:
		case off <= prev:
			w.dups.Add(1)
		case off > prev+1:
			w.gaps.Add(1)
		}
	}
	sent, ok := unstamp(text)
	if !ok {
		return
	}
	us := float64(at.Sub(sent).Microseconds())
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case strings.HasPrefix(text, "b"):
		var k int
		if _, err := fmt.Sscanf(text, "b%d ", &k); err == nil {
			w.rounds[k] = append(w.rounds[k], us)
			w.poke()
		}
	case strings.HasPrefix(text, "s "):
		if w.steady != nil {
			w.steady[histBucket(us)]++
		}
	case strings.HasPrefix(text, "x "):
		if w.armed && w.caught[conn] == 0 {
			w.caught[conn] = at.UnixNano()
			w.poke()
		}
	}
}

// poke wakes whoever waits for the counts to change; w.mu is held.
func (w *crowdWorker) poke() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// until waits (w.mu held, released while waiting) until done says so or
// wait has passed.
func (w *crowdWorker) until(wait time.Duration, done func() bool) {
	deadline := time.Now().Add(wait)
	for !done() && time.Now().Before(deadline) {
		w.mu.Unlock()
		select {
		case <-w.changed:
		case <-time.After(50 * time.Millisecond):
		}
		w.mu.Lock()
	}
}

// histBuckets and histBucket: latencies in µs on a log scale, 16 buckets
// an octave (4.4 % wide), from 1 µs to about 17 minutes.
const histBuckets = 16 * 30

func histBucket(us float64) int {
	if us < 1 {
		return 0
	}
	return min(int(math.Log2(us)*16), histBuckets-1)
}

// histValue is the upper bound of bucket i, in µs.
func histValue(i int) float64 { return math.Exp2(float64(i+1) / 16) }

// crowdFlags defines the crowd scenario's flags, and its workers'.
func crowdFlags(c *config) (worker *bool, commonIDs *string) {
	flag.IntVar(&c.common, "common", 1, "crowd: channels every connection follows (of -per)")
	flag.IntVar(&c.perProc, "per-proc", 9000, "crowd: connections a worker process holds (each process has its own open-file limit)")
	flag.IntVar(&c.rounds, "rounds", 5, "crowd: broadcasts to measure")
	flag.IntVar(&c.sources, "sources", 32, "crowd: loopback addresses the connections dial from (127.0.0.2 on)")
	worker = flag.Bool("crowd-worker", false, "run as a crowd scenario's worker process (the scenario starts these itself)")
	flag.IntVar(&c.first, "first", 0, "crowd worker: the index of its first connection")
	commonIDs = flag.String("common-ids", "", "crowd worker: the common channels")
	return worker, commonIDs
}

// runWorker is the process of a crowd worker; it exits on an error.
func runWorker(ctx context.Context, c config, common []string) {
	err := checkFiles(config{scenario: "crowd-worker", conns: c.conns})
	if err == nil {
		err = workerMain(ctx, c, common)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "albedo-bench worker:", err)
		os.Exit(1)
	}
}

// workerMain runs a worker until the parent says quit or stdin ends.
func workerMain(ctx context.Context, c config, common []string) error {
	out := json.NewEncoder(os.Stdout)
	w := &crowdWorker{n: c.conns, per: c.per, first: c.first, nodes: max(len(c.homes), len(strings.Split(c.url, ","))), prev: make([]atomic.Int64, c.conns*c.per), rounds: map[int][]float64{},
		reattach: make([]int64, c.conns), caught: make([]int64, c.conns), changed: make(chan struct{}, 1), errs: map[string]int{}}
	chans, err := workerChannels(ctx, c, common)
	if err != nil {
		return out.Encode(workerReply{Err: err.Error()})
	}
	if err := out.Encode(workerReply{}); err != nil {
		return err
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var cmd workerCmd
		if err := json.Unmarshal(in.Bytes(), &cmd); err != nil {
			return err
		}
		if cmd.Cmd == "quit" {
			return nil
		}
		var r workerReply
		if cmd.Cmd == "connect" {
			start := time.Now()
			r.Failed, err = w.connect(cctx, c, chans)
			r.ConnectS = time.Since(start).Seconds()
			if err != nil {
				r.Err = err.Error()
			}
		} else {
			r = w.answer(cmd)
		}
		if err := out.Encode(r); err != nil {
			return err
		}
	}
	return in.Err()
}

// answer serves the commands about what the connections saw.
func (w *crowdWorker) answer(cmd workerCmd) workerReply {
	var r workerReply
	w.mu.Lock()
	defer w.mu.Unlock()
	wait := time.Duration(cmd.WaitMS) * time.Millisecond
	switch cmd.Cmd {
	case "round":
		w.until(wait, func() bool { return len(w.rounds[cmd.Round]) >= w.n })
		r.Lat = slices.Sorted(slices.Values(w.rounds[cmd.Round]))
		r.Missing = max(w.n-len(r.Lat), 0)
		delete(w.rounds, cmd.Round)
	case "steady-begin":
		w.steady = make([]int64, histBuckets)
	case "steady-end":
		r.Hist, w.steady = w.steady, nil
	case "storm-arm":
		w.armed = true
		clear(w.reattach)
		clear(w.caught)
		// A connection on another node than the storm's stays attached:
		// only its event is waited for.
		for i := range w.reattach {
			if (w.first+i)%w.nodes != cmd.Node {
				w.reattach[i] = -1
			}
		}
	case "storm-report":
		all := func(ts []int64) bool { return !slices.Contains(ts, 0) }
		w.until(wait, func() bool { return all(w.reattach) && all(w.caught) })
		since := func(ts []int64) []float64 {
			var us []float64
			for _, t := range ts {
				if t > 0 {
					us = append(us, float64(t-cmd.Start)/1e3)
				}
			}
			slices.Sort(us)
			return us
		}
		r.Reattach, r.Caught = since(w.reattach), since(w.caught)
		r.Missing = count(w.reattach, 0) + count(w.caught, 0)
		w.armed = false
	case "counts":
		r.Gaps, r.Dups, r.Errs = w.gaps.Load(), w.dups.Load(), w.errs
	default:
		r.Err = "unknown command " + cmd.Cmd
	}
	return r
}

// workerChannels makes this worker's connections' channels: conn i
// follows the common ones, then per-len(common) of its own.
func workerChannels(ctx context.Context, c config, common []string) ([][]string, error) {
	own := c.per - len(common)
	names := make([]string, c.conns*own)
	for i := range names {
		names[i] = fmt.Sprintf("crowd-%d-%d", os.Getpid(), i)
	}
	if c.target == "albedo" && own > 0 {
		cl, err := client.New(client.Options{Home: c.home})
		if err != nil {
			return nil, err
		}
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(8)
		for i, name := range names {
			g.Go(func() error {
				s, err := cl.NewSession(gctx, wire.SessionCreate{Title: name})
				names[i] = s.ID
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return nil, fmt.Errorf("make sessions: %w", err)
		}
	}
	chans := make([][]string, c.conns)
	for i := range chans {
		chans[i] = append(slices.Clone(common), names[i*own:(i+1)*own]...)
	}
	return chans, nil
}

// connect opens every connection, 128 dials at a time, and returns once
// each is attached or has failed (how many did).
// Connection first+i goes to node (first+i) mod the nodes (-homes, or
// the -url list).
func (w *crowdWorker) connect(ctx context.Context, c config, chans [][]string) (int, error) {
	first := c.first
	var nodes []*albedoNode
	for _, h := range c.homes {
		n := &albedoNode{home: h}
		if _, err := n.refresh(); err != nil && c.target == "albedo" {
			return 0, err
		}
		nodes = append(nodes, n)
	}
	urls := strings.Split(c.url, ",")
	var failed atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 128)
	for i, mine := range chans {
		src := sourceAddr(first+i, c.sources)
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var err error
			switch c.target {
			case "albedo":
				up := make(chan error, 1)
				go newAlbedoCrowdConn(nodes[(first+i)%len(nodes)], i, mine, src, w, up).run(ctx)
				err = <-up
			case "centrifuge":
				_, err = cfCrowdConn(ctx, urls[(first+i)%len(urls)], &net.Dialer{LocalAddr: src}, i, mine, w)
			case "ws":
				_, err = wsCrowdConn(ctx, urls[(first+i)%len(urls)], &net.Dialer{LocalAddr: src}, i, w)
			default:
				err = fmt.Errorf("crowd: no target %q", c.target)
			}
			if err != nil {
				if failed.Add(1) == 1 {
					fmt.Fprintf(os.Stderr, "albedo-bench worker: connection %d: %v\n", first+i, err)
				}
			}
		})
	}
	wg.Wait()
	return int(failed.Load()), ctx.Err()
}
