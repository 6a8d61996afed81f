package natsbus

import (
	"context"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"albedo/hub/peer"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// server runs a NATS server in the test process and returns its URL.
func server(t *testing.T) string {
	t.Helper()
	s, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS did not start")
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// node connects a bus for node in cluster space, started on h.
func node(t *testing.T, url, name, space string, h peer.Handler) *Bus {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	b := New(nc, name, space)
	if err := b.Start(h); err != nil {
		t.Fatal(err)
	}
	return b
}

// handler keeps the notices it is given and answers requests with the
// session it was asked about.
type handler struct {
	mu      sync.Mutex
	notices []peer.Notice
	got     chan struct{}
}

func newHandler() *handler { return &handler{got: make(chan struct{}, 1<<12)} }

func (h *handler) Notice(_ string, n peer.Notice) {
	h.mu.Lock()
	h.notices = append(h.notices, n)
	h.mu.Unlock()
	h.got <- struct{}{}
}

func (h *handler) Request(r peer.Request, answer func(peer.Response)) {
	go answer(peer.Response{Turn: r.Session, Running: true}) // from another goroutine, as the hub's interrupts do
}

func (h *handler) Resumed() {}

func (h *handler) wait(t *testing.T, n int) []peer.Notice {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		h.mu.Lock()
		if len(h.notices) >= n {
			out := append([]peer.Notice(nil), h.notices...)
			h.mu.Unlock()
			return out
		}
		h.mu.Unlock()
		select {
		case <-h.got:
		case <-deadline:
			t.Fatalf("fewer than %d notices within 10s", n)
		}
	}
}

func (h *handler) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.notices)
}

// Over NATS a node hears the others of its cluster, in order, and not
// itself nor another cluster that shares the server; a request is
// answered by the node it names only.
func TestBusOverNATS(t *testing.T) {
	t.Parallel()
	url := server(t)
	ha, hb, hother := newHandler(), newHandler(), newHandler()
	a := node(t, url, "a", "c1", ha)
	node(t, url, "b", "c1", hb)
	other := node(t, url, "a", "c2", hother) // the same node name in another cluster
	if got := a.Subject(string(peer.KindText)); got != "albedo.c1.text" {
		t.Fatalf("subject %q", got)
	}
	const n = 200
	for i := range n {
		a.Publish(peer.Text{Node: "a", Session: "s", Pos: i})
	}
	for i, g := range hb.wait(t, n) {
		if g.(peer.Text).Pos != i {
			t.Fatalf("notice %d came as %d", i, g.(peer.Text).Pos)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	resp, err := other.Ask(ctx, peer.Request{To: "b", Op: peer.OpInterrupt, Session: "elsewhere"})
	if err == nil {
		t.Fatalf("a request crossed clusters: %+v", resp)
	}
	resp, err = a.Ask(context.Background(), peer.Request{To: "b", Op: peer.OpInterrupt, Session: "s"})
	if err != nil || !resp.Running || resp.Turn != "s" {
		t.Fatalf("b's answer: %+v, %v", resp, err)
	}
	// A notice published after the others arrives after them: when b has
	// it, a and the other cluster would have had theirs.
	a.Publish(peer.Changes{Node: "a"})
	hb.wait(t, n+1)
	if ha.count() != 0 || hother.count() != 0 {
		t.Fatalf("a heard %d of its own notices, the other cluster %d", ha.count(), hother.count())
	}
}
