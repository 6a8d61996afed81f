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
// 101 and the hello's reply, close; served by the edge's listener (edge) and by net/http and echo
// (net-http). Run with -count to have the two interleaved. cpu-us/op is
// the process's CPU, the client's included, which is the same in both.
func BenchmarkUpgrade(b *testing.B) {
	h, err := hub.Open(context.Background(), filepath.Join(b.TempDir(), "albedo.db"), hub.Options{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(context.Background())
	srv := New(h, Options{Token: testToken}, nil)
	defer srv.Close()
	sess, _, err := h.CreateSession(context.Background(), "bench", wire.SessionCreate{})
	if err != nil {
		b.Fatal(err)
	}
	for _, path := range []string{"edge", "net-http"} {
		b.Run(path, func(b *testing.B) {
			hs := srv.HTTPServer()
			var ln net.Listener = &gatedListener{Listener: testListener(b), open: srv.open, fresh: &srv.fresh, closed: make(chan struct{})}
			if path == "edge" {
				ln = newUpgradeListener(srv, ln)
			}
			go hs.Serve(ln)
			defer hs.Close()
			addr := ln.Addr().String()
			zero := int64(0)
			hello, _ := json.Marshal(wire.Command{ID: 1, Op: wire.OpHello, Client: "bench/1", Subs: []wire.Sub{{Session: sess.ID, After: &zero, Epoch: sess.Epoch}}})
			req := strings.ReplaceAll(upgradeText("GET /v1/ws HTTP/1.1", upgradeHeader(
				"Authorization: Bearer "+testToken, wire.HelloHeader+": "+base64.RawURLEncoding.EncodeToString(hello))), "{host}", addr)
			b.ReportAllocs()
			cpu0 := processCPU()
			b.ResetTimer()
			for range b.N {
				upgradeOnce(b, addr, req)
			}
			b.StopTimer()
			b.ReportMetric(float64(processCPU()-cpu0)/1e3/float64(b.N), "cpu-us/op")
		})
	}
}

// upgradeOnce connects to addr, sends req, reads the 101 and the hello's
// reply, and closes.
func upgradeOnce(b *testing.B, addr, req string) {
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
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		b.Fatalf("upgrade: %v %v", resp, err)
	}
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		b.Fatal(err)
	}
	n := int(h[1] & 0x7f)
	if n == 126 {
		var l [2]byte
		if _, err := io.ReadFull(br, l[:]); err != nil {
			b.Fatal(err)
		}
		n = int(l[0])<<8 | int(l[1])
	}
	if _, err := br.Discard(n); err != nil {
		b.Fatal(err)
	}
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
	h, err := hub.Open(context.Background(), filepath.Join(b.TempDir(), "albedo.db"), hub.Options{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(context.Background())
	srv := New(h, Options{Token: testToken}, nil)
	defer srv.Close()
	for _, path := range []string{"edge", "net-http"} {
		b.Run(path, func(b *testing.B) {
			hs := srv.HTTPServer()
			var ln net.Listener = &gatedListener{Listener: testListener(b), open: srv.open, fresh: &srv.fresh, closed: make(chan struct{})}
			if path == "edge" {
				ln = newUpgradeListener(srv, ln)
			}
			go hs.Serve(ln)
			defer hs.Close()
			req := "GET /healthz HTTP/1.1\r\nHost: " + ln.Addr().String() + "\r\n\r\n"
			b.ReportAllocs()
			cpu0 := processCPU()
			b.ResetTimer()
			for range b.N {
				requestOnce(b, ln.Addr().String(), req)
			}
			b.StopTimer()
			b.ReportMetric(float64(processCPU()-cpu0)/1e3/float64(b.N), "cpu-us/op")
		})
	}
}

// requestOnce connects to addr, sends req and reads its answer, which
// must be a 200.
func requestOnce(b *testing.B, addr, req string) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		b.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("%v %v", resp, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
}
