// Command albedo-bench drives a running albedo daemon, or a peer server,
// over real websockets and prints one table (or --json).
//
//	albedo-bench -target albedo -home H -scenario fanout -viewers 100
//	albedo-bench -target ws -url ws://127.0.0.1:P/ -pid N -scenario fanout
//	albedo-bench -target centrifuge -url ws://127.0.0.1:P/connection/websocket -pid N -scenario fanout
//
// A cluster: -homes H0,H1,H2 (albedo nodes) or a -url and -pid list
// (centrifuge nodes on one broker): fanout's viewers go round-robin over
// the nodes, the publisher to the first; server CPU and RSS are summed
// over the nodes. -broker-pid and -store-pid add the CPU per delivery of
// what carries the nodes' messages (NATS, Redis) and of PostgreSQL (its
// postmaster: the backends are counted with it).
//
// Scenarios: fanout (one channel, one publisher, N viewers), multiplex (one
// connection, S sessions, one flooding), persist (W writers committing
// posts), idle (N connections × K channels doing nothing), reattach
// (C clients × K channels through a restart: albedo's process, or a
// centrifuge outage), crowd (N connections in worker processes, K
// channels each, some common: connect, broadcast, a steady rate, a
// storm; crowd.go).
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// result is one scenario's measurements: name → value, with units in names.
type result struct {
	Target   string             `json:"target"`
	Scenario string             `json:"scenario"`
	Params   string             `json:"params"`
	Values   map[string]float64 `json:"values"`
}

type config struct {
	target, label, scenario, home, url, albedoBin string
	chromium                                      string
	homes                                         []string
	pids                                          []int
	brokerPID, storePID                           int
	viewers, sessions, writers, conns, per        int
	rate, window, events                          int
	common, perProc, rounds, sources, first       int
	duration, down                                time.Duration
	kill, shared                                  bool
}

func main() {
	var c config
	asJSON := flag.Bool("json", false, "print JSON instead of a table")
	reportFile := flag.String("report", "", "summarise a file of -json results as markdown, and exit")
	flag.StringVar(&c.target, "target", "albedo", "albedo, ws, centrifuge or jetstream")
	flag.StringVar(&c.label, "label", "", "the name the result goes under (default: -target), e.g. albedo-nostore for a daemon built with -tags benchnostore")
	flag.StringVar(&c.scenario, "scenario", "fanout", "fanout, multiplex, persist, idle, reattach, crowd or home")
	flag.IntVar(&c.events, "events", 100, "home: messages in each session")
	flag.StringVar(&c.chromium, "chromium", "", "home: Chromium's binary, to time the page too")
	flag.StringVar(&c.home, "home", os.Getenv("ALBEDO_HOME"), "albedo: the daemon's home")
	flag.StringVar(&c.albedoBin, "albedo", "albedo", "albedo: the binary (reattach restarts the daemon)")
	homes := flag.String("homes", "", "albedo: the homes of a cluster's nodes, comma-separated (instead of -home): fanout's viewers round-robin, the rest on the first")
	flag.StringVar(&c.url, "url", "", "peers: the websocket URL (jetstream: its nats:// URL); centrifuge: a comma-separated list of its nodes")
	pids := flag.String("pid", "", "peers: the server's pid, for CPU and RSS (a comma-separated list with several -url)")
	flag.IntVar(&c.brokerPID, "broker-pid", 0, "fanout: the pid of a cluster's broker (NATS, Redis), for its CPU per delivery")
	flag.IntVar(&c.storePID, "store-pid", 0, "fanout: the pid of PostgreSQL's postmaster, for its (and its backends') CPU per delivery")
	flag.IntVar(&c.viewers, "viewers", 100, "fanout: viewers")
	flag.IntVar(&c.rate, "rate", 0, "fanout: publishes per second (0: as fast as acknowledged); home: posts per second into sessions not shown")
	flag.IntVar(&c.sessions, "sessions", 100, "multiplex: sessions on the connection; home: sessions in the home")
	flag.IntVar(&c.writers, "writers", 10, "persist: concurrent writers")
	flag.IntVar(&c.window, "window", 0, "fanout, persist: publishes each publisher keeps in flight on its one connection (default: fanout 16, persist 1)")
	flag.IntVar(&c.conns, "conns", 1000, "idle, reattach, crowd: connections (clients)")
	flag.IntVar(&c.per, "per", 3, "idle, reattach, crowd: channels per connection")
	worker, commonIDs := crowdFlags(&c)
	flag.BoolVar(&c.kill, "kill", false, "reattach: SIGKILL the daemon instead of stopping it")
	flag.BoolVar(&c.shared, "shared", false, "idle: all connections on the same channels")
	flag.DurationVar(&c.down, "down", time.Second, "reattach, centrifuge: how long the outage lasts")
	flag.DurationVar(&c.duration, "duration", 5*time.Second, "how long to load")
	flag.Parse()
	if *homes != "" {
		c.homes = strings.Split(*homes, ",")
		c.home = c.homes[0]
	} else if c.home != "" {
		c.homes = []string{c.home}
	}
	var err error
	if c.pids, err = parsePIDs(*pids); err != nil {
		fmt.Fprintln(os.Stderr, "albedo-bench:", err)
		os.Exit(2)
	}
	if *reportFile != "" {
		if err := reportMain(*reportFile); err != nil {
			fmt.Fprintln(os.Stderr, "albedo-bench:", err)
			os.Exit(1)
		}
		return
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *worker {
		runWorker(ctx, c, strings.Split(*commonIDs, ","))
		return
	}
	r, err := runScenario(ctx, c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "albedo-bench:", err)
		os.Exit(1)
	}
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(r)
		return
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Target, r.Scenario, r.Params)
	keys := make([]string, 0, len(r.Values))
	for k := range r.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(tw, "  %s\t%.6g\n", k, r.Values[k])
	}
	tw.Flush()
}

func runScenario(ctx context.Context, c config) (result, error) {
	if err := checkFiles(c); err != nil {
		return result{}, err
	}
	t, err := newTarget(ctx, c)
	if err != nil {
		return result{}, err
	}
	defer t.close()
	r := result{Target: cmp.Or(c.label, c.target), Scenario: c.scenario, Values: map[string]float64{}}
	switch c.scenario {
	case "fanout":
		r.Params = fmt.Sprintf("viewers=%d rate=%d duration=%s", c.viewers, c.rate, c.duration)
		if c.window > 0 {
			r.Params = fmt.Sprintf("viewers=%d rate=%d window=%d duration=%s", c.viewers, c.rate, c.window, c.duration)
		}
		if n := c.nodes(); n > 1 {
			r.Params += fmt.Sprintf(" nodes=%d", n)
		}
		err = fanout(ctx, c, t, r.Values)
	case "idle":
		r.Params = fmt.Sprintf("conns=%d per=%d shared=%v", c.conns, c.per, c.shared)
		err = idle(ctx, c, t, r.Values)
	case "multiplex":
		r.Params = fmt.Sprintf("sessions=%d duration=%s", c.sessions, c.duration)
		err = multiplex(ctx, c, t, r.Values)
	case "persist":
		r.Params = fmt.Sprintf("writers=%d duration=%s", c.writers, c.duration)
		if c.window > 1 {
			r.Params = fmt.Sprintf("writers=%d window=%d duration=%s", c.writers, c.window, c.duration)
		}
		err = persist(ctx, c, t, r.Values)
	case "reattach":
		r.Params = fmt.Sprintf("clients=%d per=%d kill=%v", c.conns, c.per, c.kill)
		err = reattach(ctx, c, t, r.Values)
	case "crowd":
		r.Params = fmt.Sprintf("conns=%d per=%d common=%d rate=%d duration=%s", c.conns, c.per, c.common, c.rate, c.duration)
		err = crowd(ctx, c, t, r.Values)
	case "home":
		r.Params = fmt.Sprintf("sessions=%d events=%d rate=%d", c.sessions, c.events, c.rate)
		err = home(ctx, c, t, r.Values)
	default:
		err = fmt.Errorf("unknown scenario %q", c.scenario)
	}
	return r, err
}

// nodes is how many nodes the viewers are spread over: -homes, or the
// -url list.
func (c config) nodes() int { return max(len(c.homes), len(strings.Split(c.url, ","))) }

// stamp and unstamp put a send time into a message text. unstamp reads
// the digits itself, without fmt.Sscanf: it runs once per delivery, and
// the tool's own CPU adds to the latency it measures.
func stamp() string { return "t=" + strconv.FormatInt(time.Now().UnixNano(), 10) }

func unstamp(s string) (time.Time, bool) {
	i := strings.Index(s, "t=")
	if i < 0 {
		return time.Time{}, false
	}
	s = s[i+2:]
	n := 0
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	ns, err := strconv.ParseInt(s[:n], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}
