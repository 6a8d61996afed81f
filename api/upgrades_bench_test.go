package api

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"albedo/hub"
	"albedo/wire"
)

// BenchmarkUpgrade is a reconnect's upgrade, one after another: connect,
// the upgrade with its hello in the header (subscribed to a session), the
// 101 and the hello's reply, close; served by the edge's listener (edge)
// and by net/http and echo (net-http). Compare the two in interleaved
// processes (-test.bench 'Upgrade/edge$', then 'Upgrade/net-http$', in
// turn). cpu-us/op is the process's CPU, the client's included, which is
// the same in both.
func BenchmarkUpgrade(b *testing.B) {
	srv, h := benchServer(b)
	sess, _, err := h.CreateSession(context.Background(), "bench", wire.SessionCreate{})
	if err != nil {
		b.Fatal(err)
	}
	zero := int64(0)
	hello, _ := json.Marshal(wire.Command{ID: 1, Op: wire.OpHello, Client: "bench/1", Subs: []wire.Sub{{Session: sess.ID, After: &zero, Epoch: sess.Epoch}}})
	header := upgradeHeader("Authorization: Bearer "+testToken, wire.HelloHeader+": "+base64.RawURLEncoding.EncodeToString(hello))
	benchBothWays(b, srv, func(addr string) func(*testing.B) {
		req := strings.ReplaceAll(upgradeText("GET /v1/ws HTTP/1.1", header), "{host}", addr)
		return func(b *testing.B) { askOnce(b, addr, req, http.StatusSwitchingProtocols) }
	})
}

// benchServer is a server over a hub of its own, closed when b ends.
func benchServer(b *testing.B) (*Server, *hub.Hub) {
	h, err := hub.Open(context.Background(), filepath.Join(b.TempDir(), "albedo.db"), hub.Options{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	srv := New(h, Options{Token: testToken}, nil)
	b.Cleanup(func() {
		srv.Close()
		h.Close(context.Background())
	})
	return srv, h
}

// benchBothWays runs, as sub-benchmarks edge and net-http, the op that
// op makes for a server's address, served by the edge's listener and by
// net/http alone; cpu-us/op is the process's CPU an op.
func benchBothWays(b *testing.B, srv *Server, op func(addr string) func(*testing.B)) {
	for _, path := range []string{"edge", "net-http"} {
		b.Run(path, func(b *testing.B) {
			hs := srv.HTTPServer()
			var ln net.Listener = &gatedListener{Listener: testListener(b), open: srv.open, fresh: &srv.fresh, closed: make(chan struct{})}
			if path == "edge" {
				ln = newUpgradeListener(srv, ln)
			}
			go hs.Serve(ln)
			defer hs.Close()
			once := op(ln.Addr().String())
			b.ReportAllocs()
			cpu0 := processCPU()
			b.ResetTimer()
			for range b.N {
				once(b)
			}
			b.StopTimer()
			b.ReportMetric(float64(processCPU()-cpu0)/1e3/float64(b.N), "cpu-us/op")
		})
	}
}

// askOnce connects to addr, sends req and reads its answer, which must
// have status want: a 101's first frame (the hello's reply), another's
// body. It closes the connection.
func askOnce(b *testing.B, addr, req string, want int) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		b.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != want {
		b.Fatalf("%v %v; want %d", resp, err, want)
	}
	if want == http.StatusSwitchingProtocols {
		readText(b, br)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
}

// processCPU is the process's CPU time so far, in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkFirstRequest is what the edge's listener adds to a request
// that is not an upgrade, on a connection of its own (a client without a
// token gets no keep-alive): GET /healthz, one after another, through the
// edge's listener (edge) and through net/http alone (net-http).
func BenchmarkFirstRequest(b *testing.B) {
	srv, _ := benchServer(b)
	benchBothWays(b, srv, func(addr string) func(*testing.B) {
		req := "GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"
		return func(b *testing.B) { askOnce(b, addr, req, http.StatusOK) }
	})
}
