package api

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// At the bound on open connections the listener accepts no more until
// one closes, whoever closes it and however often; a connection closed
// twice frees one place. What it returns is still the TCP connection
// net/http and the websocket need (its descriptor, CloseWrite).
func TestOpenConnsBoundAccepts(t *testing.T) {
	t.Parallel()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	open := newOpenConns(2)
	ln := &gatedListener{Listener: raw, open: open, fresh: &freshConns{max: 100, left: make(chan struct{}, 1)}, closed: make(chan struct{})}
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for range 4 {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	next := func() net.Conn {
		t.Helper()
		select {
		case c := <-accepted:
			return c
		case <-time.After(10 * time.Second):
			t.Fatalf("not accepted within 10 s; %d open", open.Open())
			return nil
		}
	}
	first, second := next(), next()
	select {
	case <-accepted:
		t.Fatalf("a third connection accepted at the bound of 2")
	case <-time.After(200 * time.Millisecond):
	}
	if _, ok := first.(syscall.Conn); !ok {
		t.Fatalf("accepted %T: not a syscall.Conn", first)
	}
	if _, ok := first.(interface{ CloseWrite() error }); !ok {
		t.Fatalf("accepted %T: no CloseWrite", first)
	}

	first.Close()
	first.Close() // a second Close frees nothing more
	third := next()
	select {
	case <-accepted:
		t.Fatalf("a fourth connection accepted: a connection closed twice freed two places")
	case <-time.After(200 * time.Millisecond):
	}
	if n := open.Open(); n != 2 {
		t.Fatalf("%d open, want 2", n)
	}
	second.Close()
	third.Close()
	next().Close()
	if n := open.Open(); n != 0 {
		t.Fatalf("%d open after every connection closed, want 0", n)
	}
}

// A connection that is not TCP is counted as well.
func TestOpenConnsCountOtherConns(t *testing.T) {
	t.Parallel()
	open := newOpenConns(1)
	a, b := net.Pipe()
	defer b.Close()
	c := open.track(a)
	if n := open.Open(); n != 1 {
		t.Fatalf("%d open, want 1", n)
	}
	go c.Write([]byte("x"))
	if _, err := io.ReadFull(b, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c.Close()
	if n := open.Open(); n != 0 {
		t.Fatalf("%d open after Close, want 0", n)
	}
	open.room(nil) // returns: there is room again
}

// The bound leaves the daemon descriptors of its own: a thirty-second of
// the limit, at least 128 or a quarter.
func TestConnsUnderLeaveAReserve(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		files uint64
		want  int
	}{
		{1, 1}, {100, 75}, {128, 96}, {256, 192}, {1024, 896}, {20000, 19375}, {1 << 20, 1015808}, {^uint64(0), 2080374784},
	} {
		if got := connsUnder(c.files); got != c.want {
			t.Errorf("connsUnder(%d) = %d, want %d", c.files, got, c.want)
		}
	}
}

// At the bound, an http.Server's Shutdown returns: it waits for its
// accept loop before anything else, and closing the listener wakes the
// loop waiting for room (before, it waited for a connection to close:
// here an idle keep-alive, for its minute).
func TestShutdownAtTheOpenBound(t *testing.T) {
	t.Parallel()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &gatedListener{Listener: raw, open: newOpenConns(1), fresh: &freshConns{max: 100, left: make(chan struct{}, 1)}, closed: make(chan struct{})}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }), IdleTimeout: time.Minute}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	c, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() // c stays, idle, and holds the only place

	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		shut <- hs.Shutdown(ctx)
	}()
	select {
	case err := <-shut:
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown at the bound did not return within 10 s")
	}
	if err := <-served; err != http.ErrServerClosed {
		t.Fatalf("serve: %v", err)
	}
}
