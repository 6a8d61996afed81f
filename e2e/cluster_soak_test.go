//go:build !e2e_only || e2e_cluster

package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/db/pgtest"
	"albedo/wire"
)

// clusterSoakFor makes TestClusterSoak the long run: go test ./e2e -run
// TestClusterSoak -cluster-soak 10m.
var clusterSoakFor = flag.Duration("cluster-soak", 0, "run TestClusterSoak this long (default: 30 s, each fault at least once)")

// The cluster soak: three nodes on a PostgreSQL of its own and Debian's
// nats-server, behind deploy/haproxy.cfg, writers and a viewer through
// the balancer, while faults hit the cluster one after another, each
// bounded and healing by itself: a node SIGKILLed and started again, a
// node drained and started again, nats-server stopped and started again,
// PostgreSQL restarted, and one node's connections to PostgreSQL cut for
// a few seconds (through a proxy of the test's). Then every node serves
// every session byte for byte alike, offsets are dense, every
// acknowledged input is in its session exactly once and in order, and
// the viewer saw no gap, duplicate or reset.
func TestClusterSoak(t *testing.T) {
	skipShort(t, "a half-minute soak of a cluster")
	parallelLongHeavy(t)
	dur := 30 * time.Second
	if *clusterSoakFor > 0 {
		dur = *clusterSoakFor
	}
	ctx, cancel := context.WithTimeout(context.Background(), dur+3*time.Minute)
	defer cancel()
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	dbURL := srv.Database(t)
	ns := startNATSServer(t, 0)
	extra := []string{"--nats", ns.url, "--drain-window", "1s"}
	cl := startClusterOn(t, dbURL, 2, 2*time.Second, extra...)
	cut := startStoreGate(t, dbURL)
	cl.add(t, cut.url, extra...) // node-2 reaches the store through the gate
	lb, stats := startHAProxy(t, cl.nodes)
	load := startLoad(t, ctx, cl, lb, "soak-")
	faults := []struct {
		name string
		do   func()
	}{
		{"node SIGKILL and restart", func() {
			nd := cl.nodes[rand.IntN(len(cl.nodes))]
			nd.d.kill()
			nd.restart(t)
		}},
		{"node drained and restarted", func() {
			nd := cl.nodes[rand.IntN(len(cl.nodes))]
			cli(t, nd.home, "drain")
			<-nd.d.done
			nd.restart(t)
		}},
		{"nats-server stopped and restarted", func() {
			ns.stop()
			pause(ctx, 2*time.Second)
			ns = startNATSServer(t, ns.port)
		}},
		{"PostgreSQL restarted", func() {
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
		}},
		{"node-2's store connections cut for 3 s", func() { cut.shut(3 * time.Second) }},
	}
	survived := map[string]int{}
	end := time.Now().Add(dur)
	for i := 0; time.Now().Before(end) || i < len(faults); i++ {
		f := faults[i%len(faults)]
		f.do()
		healthy(t, cl, stats)
		survived[f.name]++
		pause(ctx, time.Duration(500+rand.IntN(1500))*time.Millisecond) // writes between faults
	}
	checking := time.Now()
	total, errs, longest := load.finish(t, ctx, cl)
	t.Logf("faults over after %v; checked in %v", checking.Sub(end.Add(-dur)).Round(time.Second), time.Since(checking).Round(time.Second))
	var list []string
	for name, n := range survived {
		list = append(list, fmt.Sprintf("%s ×%d", name, n))
	}
	t.Logf("%v of faults (%s); %d inputs acknowledged, each once and in order; sends answered with an error and sent again: %v; longest send %v",
		dur, strings.Join(list, ", "), total, errs, longest.Round(time.Millisecond))
}

// ownerToken makes an owner token on the store at dbURL, as an operator
// does from a shell of their own.
func ownerToken(t *testing.T, dbURL string) string {
	t.Helper()
	for line := range strings.Lines(cli(t, t.TempDir(), "tokens", "add", "--role", "owner", "ops", "--db", dbURL)) {
		if strings.HasPrefix(line, "alown_") {
			return strings.TrimSpace(line)
		}
	}
	t.Fatal("tokens add printed no token")
	return ""
}

// pause waits d, or until ctx ends: the time between two faults, not a
// wait for something to happen.
func pause(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

// writeEvery paces each writer.
const writeEvery = 50 * time.Millisecond

// writers send inputs to their sessions, one writer a session on a
// stream of its own through url, each input sent again with its id after
// an error (as the contract asks) until it is acknowledged.
type writers struct {
	halt    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	acked   [][]string
	errs    map[string]int // by code
	longest time.Duration
}

func startWriters(ctx context.Context, url, token string, ids []string) *writers {
	w := &writers{halt: make(chan struct{}), acked: make([][]string, len(ids)), errs: map[string]int{}}
	for i, id := range ids {
		w.wg.Go(func() {
			c, _ := client.New(client.Options{URL: url, Token: token})
			st := c.Stream(client.StreamOptions{})
			defer st.Close()
			for n := 0; ; n++ {
				select {
				case <-w.halt:
					return
				default:
				}
				in, start := uuid.NewString(), time.Now()
				for {
					_, err := st.Send(ctx, id, in, fmt.Sprint("input ", n))
					if err == nil {
						break
					}
					if ctx.Err() != nil {
						return
					}
					code := "other"
					if we := (*wire.Error)(nil); errors.As(err, &we) {
						code = string(we.Code)
					}
					w.mu.Lock()
					w.errs[code]++
					w.mu.Unlock()
					pause(ctx, 100*time.Millisecond)
				}
				w.mu.Lock()
				w.acked[i] = append(w.acked[i], in)
				w.longest = max(w.longest, time.Since(start))
				w.mu.Unlock()
				pause(ctx, writeEvery) // a team's pace, not a flood: the checks read it all back
			}
		})
	}
	return w
}

// stop ends the writers and returns what they had acknowledged, by
// session, how many sends were answered with an error, by code, and the
// longest send.
func (w *writers) stop() ([][]string, map[string]int, time.Duration) {
	close(w.halt)
	w.wg.Wait()
	return w.acked, w.errs, w.longest
}

// storeGate is a TCP proxy to a PostgreSQL server whose connections can be
// cut, and new ones refused, for a while: one node's way to the store
// failing while the others' works.
type storeGate struct {
	url    string // the database URL through the gate
	mu     sync.Mutex
	conns  []net.Conn
	shutTo time.Time
}

func startStoreGate(t *testing.T, dbURL string) *storeGate {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.Host = ln.Addr().String()
	g := &storeGate{url: u.String()}
	t.Cleanup(func() { ln.Close(); g.shut(0) })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			g.mu.Lock()
			shut := time.Now().Before(g.shutTo)
			g.mu.Unlock()
			out, err := net.Dial("tcp", target)
			if shut || err != nil {
				in.Close()
				if out != nil {
					out.Close()
				}
				continue
			}
			g.mu.Lock()
			g.conns = append(g.conns, in, out)
			g.mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	return g
}

// shut cuts every connection through the gate and refuses new ones for d.
func (g *storeGate) shut(d time.Duration) {
	g.mu.Lock()
	g.shutTo = time.Now().Add(d)
	conns := g.conns
	g.conns = nil
	g.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}
