package hub

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/db"
	"albedo/hub/acphost"
	"albedo/hub/acphost/fakeagent"
	"albedo/hub/mcphost"
	"albedo/hub/provider"
	"albedo/wire"
)

// piecesProvider streams a turn's input's number of pieces, in process:
// the baseline a coding agent's pieces are measured against.
type piecesProvider struct{}

func (piecesProvider) Author(provider.Request) string { return "flood" }
func (piecesProvider) Stream(_ context.Context, req provider.Request, emit func(string)) error {
	n, _ := strconv.Atoi(strings.TrimPrefix(req.Messages[len(req.Messages)-1].Text, "flood "))
	for range n {
		emit("x")
	}
	return nil
}

// agentHub is a hub whose profile coder is the fake coding agent (the
// test binary run again), with session s of it in a workspace, and
// flood, an in-process provider, with session p.
func agentHub(tb testing.TB, ended chan<- struct{}) *Hub {
	tb.Helper()
	host := acphost.New(nil, nil)
	reg, err := provider.NewRegistry(provider.Config{Providers: map[string]provider.Profile{
		"coder": {Kind: provider.KindACP, Command: []string{os.Args[0]}, Env: map[string]mcphost.Value{fakeagent.Env: {Text: "1"}, "GORACE": {Text: fakeagent.QuickExit[len("GORACE="):]}}},
	}}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	reg.Register("flood", piecesProvider{})
	h, err := Open(context.Background(), filepath.Join(tb.TempDir(), "albedo.db"), Options{Providers: reg, Agents: host,
		DB: db.Options{OnCommit: func(cs []db.Committed) {
			for _, c := range cs {
				for _, e := range c.Events {
					if turnEnd(e) != "" && ended != nil {
						ended <- struct{}{}
					}
				}
			}
		}}}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		h.Close(context.Background())
		host.Close()
	})
	if err := h.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return h
}

// cpuTime is what this process (the daemon; not the agents, its
// children) has used of the CPU.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAgentUpdate measures the daemon's own CPU per piece of a
// reply streamed to 100 viewers: from a coding agent (a separate process
// speaking ACP, whose CPU is its own), and from an in-process provider
// streaming the same pieces. The difference is ACP's share: reading and
// decoding each session/update, and handing it on. Turns of 500 pieces.
func BenchmarkAgentUpdate(b *testing.B) {
	for _, source := range []string{"agent", "provider"} {
		b.Run("source="+source, func(b *testing.B) { benchAgentUpdate(b, source) })
	}
}

func benchAgentUpdate(b *testing.B, source string) {
	const viewers, pieces = 100, 500
	ended := make(chan struct{}, 16)
	h := agentHub(b, ended)
	ctx := context.Background()
	req := wire.SessionCreate{Provider: "flood"}
	if source == "agent" {
		req = wire.SessionCreate{Provider: "coder", Workspace: b.TempDir()}
	}
	s, _, err := h.CreateSession(ctx, "s", req)
	if err != nil {
		b.Fatal(err)
	}
	defer viewersOf(h, "s", s.Epoch, viewers, func([]byte) {})()
	turn := func() {
		if _, err := h.PutInput(ctx, "s", uuid.Must(uuid.NewV7()).String(), fmt.Sprintf("flood %d", pieces), wire.Author{Name: "user"}); err != nil {
			b.Fatal(err)
		}
		select {
		case <-ended:
		case <-time.After(time.Minute):
			b.Fatal("the turn did not end")
		}
	}
	turn() // the agent's start is not what is measured
	turns := max(1, b.N/pieces)
	b.ResetTimer()
	cpu := cpuTime()
	for range turns {
		turn()
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(turns*pieces), "daemon-µs/piece")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkAgentsIdle measures what 20 coding agents kept idle cost the
// daemon in memory: its RSS before their sessions' first turns and
// after, once they are idle (the agents' own memory is their
// processes').
func BenchmarkAgentsIdle(b *testing.B) {
	const agents = 20
	ended := make(chan struct{}, agents)
	h := agentHub(b, ended)
	ctx := context.Background()
	before := selfRSS(b)
	b.ResetTimer()
	for i := range agents { // once, whatever b.N: 20 processes are the figure
		id := fmt.Sprintf("s%d", i)
		if _, _, err := h.CreateSession(ctx, id, wire.SessionCreate{Provider: "coder", Workspace: b.TempDir()}); err != nil {
			b.Fatal(err)
		}
		if _, err := h.PutInput(ctx, id, uuid.Must(uuid.NewV7()).String(), "hello", wire.Author{Name: "user"}); err != nil {
			b.Fatal(err)
		}
	}
	for range agents {
		<-ended
	}
	b.StopTimer()
	if n := h.opts.Agents.Running(); n != agents {
		b.Fatalf("%d agents run", n)
	}
	b.ReportMetric(float64(selfRSS(b)-before)/agents, "daemon-KiB/agent")
	b.ReportMetric(0, "ns/op")
}

// selfRSS is this process's resident memory, in KiB.
func selfRSS(tb testing.TB) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Skip("no /proc")
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}
