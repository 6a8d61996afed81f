//go:build !e2e_only || e2e_cluster

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"albedo/client"
	"albedo/wire"
)

// A rolling restart of three nodes behind haproxy (deploy/haproxy.cfg as
// it is), on Debian's nats-server: each node in turn is drained (albedo
// drain), stops, and starts again, while writers and viewers work through
// the balancer. No writer sees an error; every acknowledged input is in
// its session exactly once and in order; no viewer sees a gap, a
// duplicate or a reset; every node serves the same bytes.
func TestClusterRollingRestartBehindHAProxy(t *testing.T) {
	parallelLong(t)
	ns := startNATSServer(t, 0)
	cl := startClusterOn(t, clusterDatabase(t, 3), 3, 2*time.Second, "--nats", ns.url, "--drain-window", "1500ms")
	// Three drains and restarts under a writer load take 17 s alone and
	// 90 s beside the package's other tests on two cores: the fixture's
	// 60 s only end a run that hangs when the machine is quiet.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	lb, stats := startHAProxy(t, cl.nodes)
	load := startLoad(t, ctx, cl, lb, "rolling-")

	restarted := 0
	for _, nd := range cl.nodes {
		pid := nd.d.cmd.Process.Pid
		out := cli(t, nd.home, "drain")
		if !strings.Contains(out, fmt.Sprintf("stopped daemon pid %d", pid)) {
			t.Fatalf("albedo drain on %s: %s", nd.name, out)
		}
		<-nd.d.done
		if !strings.Contains(nd.d.logText(), "daemon draining") || strings.Contains(nd.d.logText(), "deadline exceeded") {
			t.Fatalf("%s did not drain cleanly:\n%s", nd.name, nd.d.logText())
		}
		nd.restart(t)
		healthy(t, cl, stats) // the balancer sends it clients again before the next goes
		restarted++
	}
	total, errs, longest := load.finish(t, ctx, cl)
	if len(errs) > 0 {
		t.Fatalf("the writers saw errors: %v", errs)
	}
	t.Logf("%d nodes drained and restarted; %d inputs acknowledged, none lost or repeated; longest send %v", restarted, total, longest.Round(time.Millisecond))
}

// load is writers and a viewer through a cluster's balancer, on
// sessions of their own.
type load struct {
	c    *client.Client // the owner's, through the balancer
	ids  []string
	view *watcher
	w    *writers
}

// startLoad makes three sessions named prefix0… through the balancer at
// lb, as an owner of the cluster's store, and starts a viewer of them and
// a writer to each.
func startLoad(t *testing.T, ctx context.Context, cl *cluster, lb, prefix string) *load {
	t.Helper()
	token := ownerToken(t, cl.url)
	c, err := client.New(client.Options{URL: lb, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	l := &load{c: c}
	epochs := map[string]string{}
	for i := range 3 {
		s, err := c.CreateSession(ctx, fmt.Sprint(prefix, i), wire.SessionCreate{})
		if err != nil {
			t.Fatal(err)
		}
		l.ids, epochs[s.ID] = append(l.ids, s.ID), s.Epoch
	}
	l.view = watchWith(t, ctx, c, "the balancer", epochs)
	l.w = startWriters(ctx, lb, token, l.ids)
	return l
}

// finish stops the writers and checks what the cluster kept: every
// acknowledged input once and in order, dense offsets, the same bytes on
// every node, a viewer that has it all with no gap, duplicate or reset.
// It returns how many inputs were acknowledged, the writers' errors by
// code, and the longest send.
func (l *load) finish(t *testing.T, ctx context.Context, cl *cluster) (int, map[string]int, time.Duration) {
	t.Helper()
	acked, errs, longest := l.w.stop()
	total := 0
	for i, id := range l.ids {
		evs := waitTurnsClosed(t, ctx, l.c, id, len(acked[i]))
		if got := userInputs(evs); fmt.Sprint(got) != fmt.Sprint(acked[i]) {
			t.Fatalf("session %s holds %d inputs, %d acknowledged: not each once, in order", id, len(got), len(acked[i]))
		}
		total += len(acked[i])
		for j, e := range evs {
			if e.Offset != int64(j+1) {
				t.Fatalf("session %s: offset %d at %d: not dense", id, e.Offset, j+1)
			}
		}
		deadline := time.Now().Add(30 * time.Second)
		for !l.view.has(id, len(evs)) { // fails at once on a gap, a duplicate or a reset
			if time.Now().After(deadline) {
				t.Fatalf("the viewer does not have session %s's %d events", id, len(evs))
			}
			time.Sleep(20 * time.Millisecond) // polling under a deadline
		}
		base := rawEvents(t, cl.nodes[0], id)
		for _, nd := range cl.nodes[1:] {
			if string(rawEvents(t, nd, id)) != string(base) {
				t.Fatalf("%s and %s serve session %s differently", cl.nodes[0].name, nd.name, id)
			}
		}
	}
	return total, errs, longest
}

// healthy waits until every node of cl is ready and the balancer holds
// them all up.
func healthy(t *testing.T, cl *cluster, stats string) {
	t.Helper()
	for _, nd := range cl.nodes {
		deadline := time.Now().Add(30 * time.Second)
		for readyzCode(t, nd) != 200 {
			if time.Now().After(deadline) {
				t.Fatalf("%s is not ready again:\n%s", nd.name, nd.d.logText())
			}
			time.Sleep(20 * time.Millisecond) // polling under a deadline
		}
	}
	waitUp(t, stats, len(cl.nodes))
}

// userInputs lists the input ids of the user messages of evs, in order.
func userInputs(evs []wire.Event) []string {
	var ids []string
	for _, e := range evs {
		if e.Type == wire.EventMessage && e.Role == wire.RoleUser {
			ids = append(ids, e.InputID)
		}
	}
	return ids
}
