package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
)

// crowd: N connections, each following -per channels: -common of them
// shared by everyone, the rest its own. The connections live in worker
// processes (crowd_worker.go), at most -per-proc each, dialing from
// -sources loopback addresses. Measures:
//
//   - connect: the rate of connections attached, and the server's RSS per
//     connection (its growth over the connections);
//   - broadcast: one event in the first common channel, -rounds times; the
//     time until the last connection has it, and p50/p99 over connections;
//   - steady: -rate events a second into it for -duration; p50/p99 of the
//     deliveries, and the server's and the tool's CPU per delivery;
//   - storm (albedo: SIGKILL and start again; centrifuge: an outage of
//     -down): the time until every connection is attached again and until
//     every one has an event published once the server accepts again;
//     gaps and duplicates by offset, over the whole run.
func crowd(ctx context.Context, c config, t target, out map[string]float64) error {
	if c.common < 1 || c.common > c.per {
		return fmt.Errorf("crowd: -common %d must be between 1 and -per %d", c.common, c.per)
	}
	common := make([]string, c.common)
	for i := range common {
		var err error
		if common[i], err = t.channel(ctx, fmt.Sprintf("crowd-common-%d-%s", i, uuid.NewString()[:6])); err != nil {
			return err
		}
	}
	ws, err := startWorkers(ctx, c, common)
	defer ws.quit()
	if err != nil {
		return err
	}
	if err := crowdConnect(ctx, c, t, ws, out); err != nil {
		return err
	}
	pub, closePub, err := t.publisher(ctx)
	if err != nil {
		return err
	}
	defer closePub()
	if err := crowdBroadcast(ctx, c, t, ws, pub, common[0], out); err != nil {
		return err
	}
	if err := crowdSteady(ctx, c, t, ws, pub, common[0], out); err != nil {
		return err
	}
	if rt, ok := t.(restartable); ok && c.target != "ws" {
		closePub() // its daemon is about to go; the storm opens its own
		if err := crowdStorm(ctx, c, rt, ws, common[0], out); err != nil {
			return err
		}
	}
	rs, err := ws.ask(workerCmd{Cmd: "counts"})
	if err != nil {
		return err
	}
	errs := map[string]int{}
	for _, r := range rs {
		out["gaps"] += float64(r.Gaps)
		out["duplicates"] += float64(r.Dups)
		for k, n := range r.Errs {
			errs[k] += n
			out["reconnects failed"] += float64(n)
		}
	}
	for k, n := range errs {
		fmt.Fprintf(os.Stderr, "albedo-bench: %d reconnects failed: %s\n", n, k)
	}
	return nil
}

// crowdConnect opens every connection, after the workers have made their
// own channels, and measures the server's RSS before and after.
func crowdConnect(ctx context.Context, c config, t target, ws *workers, out map[string]float64) error {
	untilIdle(t.pids())
	rss0, cpu0, load0 := procsRSS(t.pids()), procsCPU(t.pids()), ws.cpu()
	rs, err := ws.ask(workerCmd{Cmd: "connect"})
	if err != nil {
		return err
	}
	out["connect cpu per connection us"] = (procsCPU(t.pids()) - cpu0) / float64(c.conns)
	out["connect tool cpu per connection us"] = (ws.cpu() - load0) / float64(c.conns)
	var slowest float64
	for _, r := range rs {
		slowest = max(slowest, r.ConnectS)
		out["failed connections"] += float64(r.Failed)
	}
	out["connect per s"] = float64(c.conns) / slowest
	out["connect s"] = slowest
	// The server settles (the presence and status of a crowd's arrival);
	// this is a measurement, not a synchronisation.
	time.Sleep(2 * time.Second)
	rss1 := procsRSS(t.pids())
	out["rss per connection KiB"] = (rss1 - rss0) / float64(c.conns) / 1024
	out["server rss MiB"] = rss1 / (1 << 20)
	out["workers"] = float64(len(ws.procs))
	return nil
}

// untilIdle waits, at most two minutes, until the servers are idle (under
// a tenth of a core over 1.5 s, longer than a cluster node's poll of the
// store's changes): the nodes of a cluster apply the changes of the
// workers' sessions made on another for a while, and that is no part of
// what the crowd's connections cost.
func untilIdle(pids []int) {
	const window = 1500 * time.Millisecond
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		cpu0 := procsCPU(pids)
		time.Sleep(window) // a measurement window, not a synchronisation
		if procsCPU(pids)-cpu0 < 0.1*float64(window.Microseconds()) {
			return
		}
	}
}

// crowdBroadcast publishes -rounds single events and reports the median
// round's figures.
func crowdBroadcast(ctx context.Context, c config, t target, ws *workers, pub publishFunc, ch string, out map[string]float64) error {
	var p50s, p99s, lasts []float64
	cpu0, load0 := procsCPU(t.pids()), ws.cpu()
	missing := 0
	for k := 1; k <= c.rounds; k++ {
		if err := pub(ctx, ch, fmt.Sprintf("b%d %s", k, stamp())); err != nil {
			return fmt.Errorf("broadcast %d: %w", k, err)
		}
		rs, err := ws.ask(workerCmd{Cmd: "round", Round: k, WaitMS: 30000})
		if err != nil {
			return err
		}
		var lat []float64
		for _, r := range rs {
			lat = append(lat, r.Lat...)
			missing += r.Missing
		}
		if len(lat) == 0 {
			return fmt.Errorf("broadcast %d: no connection had it in 30 s", k)
		}
		slices.Sort(lat)
		p50s = append(p50s, lat[len(lat)/2]/1e3)
		p99s = append(p99s, lat[len(lat)*99/100]/1e3)
		lasts = append(lasts, lat[len(lat)-1]/1e3)
	}
	deliveries := float64(c.rounds*c.conns - missing)
	out["broadcast p50 ms"] = median(p50s)
	out["broadcast p99 ms"] = median(p99s)
	out["broadcast last ms"] = median(lasts)
	out["broadcast missing"] = float64(missing)
	out["broadcast cpu per delivery us"] = (procsCPU(t.pids()) - cpu0) / deliveries
	out["broadcast tool cpu per delivery us"] = (ws.cpu() - load0) / deliveries
	return nil
}

// crowdSteady publishes -rate events a second for -duration.
func crowdSteady(ctx context.Context, c config, t target, ws *workers, pub publishFunc, ch string, out map[string]float64) error {
	if _, err := ws.ask(workerCmd{Cmd: "steady-begin"}); err != nil {
		return err
	}
	cpu0, load0, start := procsCPU(t.pids()), ws.cpu(), time.Now()
	broker0, store0 := procCPU(c.brokerPID), treeCPU(c.storePID)
	every := time.Second / time.Duration(max(c.rate, 1))
	tick := time.NewTicker(every)
	sent := 0
	for time.Since(start) < c.duration {
		if err := pub(ctx, ch, "s "+stamp()); err != nil {
			tick.Stop()
			return fmt.Errorf("steady: %w", err)
		}
		sent++
		<-tick.C
	}
	tick.Stop()
	// The last event's deliveries: as long as a broadcast's, at most.
	time.Sleep(time.Duration(out["broadcast last ms"]*2+100) * time.Millisecond)
	elapsed := time.Since(start).Seconds()
	cpu, load := procsCPU(t.pids())-cpu0, ws.cpu()-load0
	rs, err := ws.ask(workerCmd{Cmd: "steady-end"})
	if err != nil {
		return err
	}
	hist := make([]int64, histBuckets)
	var n int64
	for _, r := range rs {
		for i, v := range r.Hist {
			hist[i] += v
			n += v
		}
	}
	if n == 0 {
		return fmt.Errorf("steady: nothing delivered")
	}
	out["steady events per s"] = float64(sent) / c.duration.Seconds()
	out["steady deliveries per s"] = float64(n) / elapsed
	out["steady delivered share"] = float64(n) / float64(sent*c.conns)
	out["steady p50 ms"] = histQuantile(hist, n, 0.5) / 1e3
	out["steady p99 ms"] = histQuantile(hist, n, 0.99) / 1e3
	out["steady cpu per delivery us"] = cpu / float64(n)
	if c.brokerPID > 0 {
		out["steady broker cpu per delivery us"] = (procCPU(c.brokerPID) - broker0) / float64(n)
	}
	if c.storePID > 0 {
		out["steady store cpu per delivery us"] = (treeCPU(c.storePID) - store0) / float64(n)
	}
	out["steady server cpu %"] = cpu / elapsed / 1e4
	out["steady tool cpu %"] = load / elapsed / 1e4
	return nil
}

// crowdStorm takes the server away from every connection and brings it
// back; once it accepts, one event goes into the common channel.
func crowdStorm(ctx context.Context, c config, rt restartable, ws *workers, ch string, out map[string]float64) error {
	if _, err := ws.ask(workerCmd{Cmd: "storm-arm"}); err != nil {
		return err
	}
	start := time.Now()
	if err := rt.restart(ctx, c.target == "albedo", c.down); err != nil {
		return fmt.Errorf("storm: %w", err)
	}
	out["storm back s"] = time.Since(start).Seconds()
	cpu0, load0 := procsCPU(rt.pids()), ws.cpu()
	reads0, writes0 := procsSyscalls(rt.pids())
	defer func() {
		out["storm cpu per connection us"] = (procsCPU(rt.pids()) - cpu0) / float64(c.conns)
		reads, writes := procsSyscalls(rt.pids())
		out["storm reads per connection"] = (reads - reads0) / float64(c.conns)
		out["storm writes per connection"] = (writes - writes0) / float64(c.conns)
		out["storm tool cpu per connection us"] = (ws.cpu() - load0) / float64(c.conns)
	}()
	pub, closePub, err := rt.publisher(ctx)
	if err != nil {
		return err
	}
	defer closePub()
	if err := pub(ctx, ch, "x "+stamp()); err != nil {
		return fmt.Errorf("storm: publish: %w", err)
	}
	rs, err := ws.ask(workerCmd{Cmd: "storm-report", WaitMS: 120000, Start: start.UnixNano()})
	if err != nil {
		return err
	}
	var re, caught []float64
	missing := 0
	for _, r := range rs {
		re, caught = append(re, r.Reattach...), append(caught, r.Caught...)
		missing += r.Missing
	}
	slices.Sort(re)
	slices.Sort(caught)
	q := func(xs []float64, p float64) float64 {
		if len(xs) == 0 {
			return -1
		}
		return xs[min(int(float64(len(xs))*p), len(xs)-1)] / 1e6
	}
	out["storm reattached p50 s"] = q(re, 0.5)
	out["storm reattached all s"] = q(re, 1)
	out["storm caught up p50 s"] = q(caught, 0.5)
	out["storm caught up all s"] = q(caught, 1)
	out["storm missing"] = float64(missing)
	return nil
}

// histQuantile is the upper bound of the bucket holding quantile p.
func histQuantile(hist []int64, n int64, p float64) float64 {
	want := int64(float64(n) * p)
	var seen int64
	for i, v := range hist {
		seen += v
		if seen > want {
			return histValue(i)
		}
	}
	return histValue(len(hist) - 1)
}

// workers are the crowd's worker processes.
type workers struct {
	procs []*exec.Cmd
	ins   []io.WriteCloser
	outs  []*bufio.Scanner
}

// startWorkers starts as many workers as -per-proc connections each
// need, and returns once each has made its own channels.
func startWorkers(ctx context.Context, c config, common []string) (*workers, error) {
	exe, err := os.Executable()
	if err != nil {
		return &workers{}, err
	}
	n := (c.conns + c.perProc - 1) / c.perProc
	ws := &workers{}
	for i := range n {
		share := c.conns / n
		if i < c.conns%n {
			share++
		}
		first := i*(c.conns/n) + min(i, c.conns%n)
		args := []string{"-crowd-worker", "-target", c.target, "-conns", strconv.Itoa(share), "-per", strconv.Itoa(c.per),
			"-first", strconv.Itoa(first), "-sources", strconv.Itoa(c.sources), "-common-ids", strings.Join(common, ",")}
		if len(c.homes) > 0 {
			args = append(args, "-homes", strings.Join(c.homes, ","))
		}
		if c.url != "" {
			args = append(args, "-url", c.url)
		}
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Stderr = os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		in, err := cmd.StdinPipe()
		if err != nil {
			return ws, err
		}
		outp, err := cmd.StdoutPipe()
		if err != nil {
			return ws, err
		}
		if err := cmd.Start(); err != nil {
			return ws, err
		}
		sc := bufio.NewScanner(outp)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		ws.procs, ws.ins, ws.outs = append(ws.procs, cmd), append(ws.ins, in), append(ws.outs, sc)
	}
	_, err = ws.replies() // each worker's first line: its channels are made
	return ws, err
}

// ask sends cmd to every worker and returns their replies.
func (ws *workers) ask(cmd workerCmd) ([]workerReply, error) {
	b, _ := json.Marshal(cmd)
	for _, in := range ws.ins {
		if _, err := in.Write(append(b, '\n')); err != nil {
			return nil, fmt.Errorf("worker: %w", err)
		}
	}
	return ws.replies()
}

// replies reads one reply from every worker, at once.
func (ws *workers) replies() ([]workerReply, error) {
	rs := make([]workerReply, len(ws.outs))
	errs := make([]error, len(ws.outs))
	var wg sync.WaitGroup
	for i, sc := range ws.outs {
		wg.Go(func() {
			if !sc.Scan() {
				errs[i] = fmt.Errorf("worker %d ended: %v", i, sc.Err())
				return
			}
			if err := json.Unmarshal(sc.Bytes(), &rs[i]); err != nil {
				errs[i] = err
			} else if rs[i].Err != "" {
				errs[i] = fmt.Errorf("worker %d: %s", i, rs[i].Err)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return rs, err
		}
	}
	return rs, nil
}

// cpu is the workers' CPU time in µs.
func (ws *workers) cpu() float64 {
	var t float64
	for _, p := range ws.procs {
		t += procCPU(p.Process.Pid)
	}
	return t
}

func (ws *workers) quit() {
	for _, in := range ws.ins {
		in.Write([]byte(`{"cmd":"quit"}` + "\n"))
		in.Close()
	}
	for _, p := range ws.procs {
		p.Wait()
	}
}
