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
	ctx := ctxT(t)
	lb, stats := startHAProxy(t, cl.nodes)
	shell := t.TempDir()
	var token string
	for line := range strings.Lines(cli(t, shell, "tokens", "add", "--role", "owner", "ops", "--db", cl.url)) {
		if strings.HasPrefix(line, "alown_") {
			token = strings.TrimSpace(line)
		}
	}
	c, err := client.New(client.Options{URL: lb, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	const sessions = 3
	var ids []string
	epochs := map[string]string{}
	for i := range sessions {
		s, err := c.CreateSession(ctx, fmt.Sprint("rolling-", i), wire.SessionCreate{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
		epochs[s.ID] = s.Epoch
	}
	view := viewThrough(t, ctx, lb, token, epochs)

	// Writers, one a session, each on a stream of its own through the
	// balancer, until the restarts are over.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	acked := make([][]string, sessions)
	errs := make(chan error, 64)
	var mu sync.Mutex
	var longest time.Duration
	for i, id := range ids {
		wg.Go(func() {
			wc, _ := client.New(client.Options{URL: lb, Token: token})
			st := wc.Stream(client.StreamOptions{})
			defer st.Close()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				in := uuid.NewString()
				start := time.Now()
				if _, err := st.Send(ctx, id, in, fmt.Sprint("input ", n)); err != nil {
					errs <- fmt.Errorf("session %s, input %d: %w", id, n, err)
					return
				}
				mu.Lock()
				acked[i] = append(acked[i], in)
				longest = max(longest, time.Since(start))
				mu.Unlock()
			}
		})
	}

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
		deadline := time.Now().Add(15 * time.Second)
		for readyzCode(t, nd) != 200 {
			if time.Now().After(deadline) {
				t.Fatalf("%s is not ready again", nd.name)
			}
			time.Sleep(20 * time.Millisecond) // polling under a deadline
		}
		waitUp(t, stats, 3) // the balancer sends it clients again before the next goes
		restarted++
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a writer saw an error: %v", err)
	}
	if t.Failed() {
		return
	}

	total := 0
	for i, id := range ids {
		got := userInputs(t, ctx, c, id)
		if fmt.Sprint(got) != fmt.Sprint(acked[i]) {
			t.Fatalf("session %s holds %d inputs, %d acknowledged: not each once, in order", id, len(got), len(acked[i]))
		}
		total += len(got)
		head := int64(len(waitTurnsClosed(t, ctx, c, id, len(got))))
		view.waitFor(t, id, head)
		base := rawEvents(t, cl.nodes[0], id)
		for _, nd := range cl.nodes[1:] {
			if string(rawEvents(t, nd, id)) != string(base) {
				t.Fatalf("%s and %s serve session %s differently", cl.nodes[0].name, nd.name, id)
			}
		}
	}
	view.check(t)
	t.Logf("%d nodes drained and restarted; %d inputs acknowledged, none lost or repeated; longest send %v", restarted, total, longest.Round(time.Millisecond))
}

// userInputs lists the input ids of a session's user messages, in order.
func userInputs(t *testing.T, ctx context.Context, c *client.Client, session string) []string {
	t.Helper()
	var ids []string
	for _, e := range events(t, ctx, c, session) {
		if e.Type == wire.EventMessage && e.Role == wire.RoleUser {
			ids = append(ids, e.InputID)
		}
	}
	return ids
}

// viewer follows sessions through the balancer and records, per session,
// the newest offset it was given, and what it saw wrong.
type viewer struct {
	mu   sync.Mutex
	last map[string]int64
	errs []string
	seen chan struct{} // a tick on every event
}

// viewThrough starts a viewer of the sessions of epochs at url.
func viewThrough(t *testing.T, ctx context.Context, url, token string, epochs map[string]string) *viewer {
	t.Helper()
	c, err := client.New(client.Options{URL: url, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	st := c.Stream(client.StreamOptions{})
	t.Cleanup(func() { st.Close() })
	v := &viewer{last: map[string]int64{}, seen: make(chan struct{}, 1)}
	for id, epoch := range epochs {
		sub := st.Subscribe(id, client.Cursor{Epoch: epoch})
		go func() {
			for {
				it, err := sub.Next(ctx)
				if err != nil {
					return
				}
				v.mu.Lock()
				switch {
				case it.Op == wire.PushReset && it.Reset.Reason != wire.ResetNew:
					v.errs = append(v.errs, fmt.Sprintf("%s: a reset (%s)", id, it.Reset.Reason))
				case it.Op == wire.PushEvent:
					if it.Event.Offset != v.last[id]+1 {
						v.errs = append(v.errs, fmt.Sprintf("%s: offset %d after %d", id, it.Event.Offset, v.last[id]))
					}
					v.last[id] = it.Event.Offset
				}
				v.mu.Unlock()
				select {
				case v.seen <- struct{}{}:
				default:
				}
			}
		}()
	}
	return v
}

// waitFor waits until the viewer has session's events up to head.
func (v *viewer) waitFor(t *testing.T, session string, head int64) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		v.mu.Lock()
		got := v.last[session]
		v.mu.Unlock()
		if got >= head {
			return
		}
		select {
		case <-v.seen:
		case <-deadline:
			t.Fatalf("the viewer has session %s up to %d, not %d", session, got, head)
		}
	}
}

// check fails t with what the viewer saw wrong.
func (v *viewer) check(t *testing.T) {
	t.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, e := range v.errs {
		t.Error("viewer: " + e)
	}
}
