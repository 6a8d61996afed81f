package api

import (
	"net"
	"net/http"
	"testing"
	"time"
)

// A request's header ends at its blank line, however the reads split it;
// LF LF ends it as net/http takes it too.
func TestRequestProgressSeesTheHeaderEnd(t *testing.T) {
	t.Parallel()
	for _, reads := range [][]string{
		{"GET / HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"GET / HTTP/1.1\r\nHost: x\r\n", "\r\n"},
		{"GET / HTTP/1.1\r\nHost: x\r", "\n\r\n"},
		{"GET / HTTP/1.1\r\nHost: x\r\n\r", "\n"},
		{"GET / HTTP/1.1\nHost: x\n", "\n"},
		{"GET / HTTP/1.1\r\nHost: x\r\n", "\r", "\n"},
	} {
		var p requestProgress
		for i, r := range reads {
			if p.whole.Load() {
				t.Fatalf("%q: whole before read %d", reads, i)
			}
			p.saw([]byte(r))
		}
		if whole, _ := p.state(); !whole {
			t.Errorf("%q: the header's end not seen", reads)
		}
	}
	var p requestProgress
	for _, r := range []string{"GET / HTTP/1.1\r\n", "Host: x\r\n", "X: \r", "\r\n"} {
		p.saw([]byte(r))
	}
	if whole, last := p.state(); whole || last.IsZero() {
		t.Errorf("a header not ended: whole %v, last read %v", whole, last)
	}
}

// What a connection's first bytes say at accept: a header begun, one
// ended (or longer than a peek), or nothing that says (TLS's handshake).
func TestClassifyHeader(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		b    string
		full bool
		want headerSeen
	}{
		{"", false, headerUnknown},
		{"G", false, headerPartial},
		{"GET /v1/sessions HTTP/1.1\r\nHost: x\r\n", false, headerPartial},
		{"GET /v1/sessions HTTP/1.1\r\nHost: x\r\n\r\n", false, headerWhole},
		{"GET /v1/sessions HTTP/1.1\r\nCookie: aaaa", true, headerWhole},
		{"\x16\x03\x01\x02\x00", false, headerUnknown},
	} {
		if got := classifyHeader([]byte(c.b), c.full); got != c.want {
			t.Errorf("%q (full %v): %v, want %v", c.b, c.full, got, c.want)
		}
	}
}

// A fresh connection that sent part of a header and nothing more is
// closed to make room once partialGrace has passed since its last bytes
// were read, long before freshGrace; one whose header came whole is
// never closed for room: it is about to be served.
func TestFreshConnsCloseAStalledHeaderSoon(t *testing.T) {
	t.Parallel()
	ln := &gatedListener{Listener: testListener(t), open: newOpenConns(100), fresh: &freshConns{max: 100}, closed: make(chan struct{})}
	stalled := acceptedConn(t, ln, "GET /v1/sessions HTTP/1.1\r\nX-Slow: a")
	whole := acceptedConn(t, ln, "GET /v1/sessions HTTP/1.1\r\nHost: x\r\n\r\n")
	f := freshConns{max: 2, left: make(chan struct{}, 1)}
	f.connState(whole, http.StateNew)
	f.connState(stalled, http.StateNew)
	for _, c := range []net.Conn{whole, stalled} {
		if _, err := c.Read(make([]byte, 4096)); err != nil { // as net/http does
			t.Fatal(err)
		}
	}
	f.conns[0].at = time.Now().Add(-time.Minute)
	f.conns[1].at = time.Now().Add(-time.Minute)
	if i, wait := f.idlest(time.Now()); i >= 0 || wait > partialGrace {
		t.Fatalf("idlest %d, wait %v: want none yet, and a look within %v", i, wait, partialGrace)
	}
	if i, _ := f.idlest(time.Now().Add(partialGrace)); i != 1 {
		t.Fatalf("idlest %d past partialGrace, want the stalled header's (1)", i)
	}
}

// At the fresh bound the listener does not wait with a flood in its
// queue: a connection accepted with a header begun and not ended is
// closed at once (counted as shed), and one whose header is whole behind
// it is served without a place among the fresh ones.
func TestGateShedsAStalledHeaderAtTheBound(t *testing.T) {
	t.Parallel()
	raw := testListener(t)
	f := &freshConns{max: 1, left: make(chan struct{}, 1)}
	ln := &gatedListener{Listener: raw, open: newOpenConns(100), fresh: f, closed: make(chan struct{})}
	t.Cleanup(func() { ln.Close() })
	idle := acceptedConn(t, ln, "")
	f.connState(idle, http.StateNew) // the bound: one that sent nothing, within its grace

	flood := dialSend(t, raw.Addr().String(), "GET / HTTP/1.1\r\nX-Slow: ")
	owner := dialSend(t, raw.Addr().String(), "GET /v1/sessions HTTP/1.1\r\nHost: x\r\n\r\n")
	got := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	select {
	case c := <-got:
		if p, _ := requestOf(c); p == nil || !p.whole.Load() {
			t.Fatal("the accepted connection is not the one whose header is whole")
		}
		f.connState(c, http.StateNew)
		if len(f.conns) != 1 {
			t.Fatalf("%d fresh, want the idle one only", len(f.conns))
		}
	case <-time.After(freshGrace / 2):
		t.Fatal("the listener waited for room with a stalled header before the owner's")
	}
	flood.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := flood.Read(make([]byte, 1)); err == nil {
		t.Fatal("the stalled header's connection is still open")
	}
	if f.shed.Load() != 1 {
		t.Fatalf("shed %d, want 1", f.shed.Load())
	}
	owner.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := owner.Read(make([]byte, 1)); !isTimeout(err) {
		t.Fatalf("the owner's connection: %v, want it open", err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// dialSend connects to addr and writes send, closing the connection when
// t ends.
func dialSend(t *testing.T, addr, send string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write([]byte(send)); err != nil {
		t.Fatal(err)
	}
	return c
}

// BenchmarkFreshConnsBesideAFullGate is one connection's passage through
// the fresh connections while 1 023 others wait at a bound of 1 024 (a
// storm, or a flood): accepted, served (the handler's drop), hijacked
// and closed, which net/http each reports.
func BenchmarkFreshConnsBesideAFullGate(b *testing.B) {
	f := &freshConns{max: 1024, left: make(chan struct{}, 1)}
	for range 1023 {
		c, _ := net.Pipe()
		defer c.Close()
		f.connState(c, http.StateNew)
	}
	conns := make([]net.Conn, b.N)
	for i := range conns {
		conns[i], _ = net.Pipe()
	}
	b.ResetTimer()
	for _, c := range conns {
		f.connState(c, http.StateNew)
		f.drop(c)
		f.connState(c, http.StateHijacked)
		f.connState(c, http.StateClosed)
	}
}
