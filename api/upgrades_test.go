package api

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"albedo/wire"
)

// edgeServer serves e's server as the daemon does (Listener, HTTPServer),
// counting the connections net/http is handed.
func edgeServer(t *testing.T, e *env) (addr string, seen *atomic.Int64) {
	t.Helper()
	hs := e.srv.HTTPServer()
	seen = new(atomic.Int64)
	inner := hs.ConnState
	hs.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateNew {
			seen.Add(1)
		}
		inner(c, st)
	}
	ln := e.srv.Listener(testListener(t), nil)
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String(), seen
}

// rawExchange sends req on a new connection to addr and returns the
// response to it as text: its status, its header but Date, sorted, and
// its body, with "{host}" for addr.
func rawExchange(t *testing.T, addr, req string) string {
	t.Helper()
	c := dialAndWrite(t, addr, []byte(req))
	defer c.Close()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", req, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Header.Del("Date")
	var lines []string
	for k, vs := range resp.Header {
		lines = append(lines, k+": "+strings.Join(vs, ", "))
	}
	slices.Sort(lines)
	return strings.ReplaceAll(fmt.Sprintf("%s\n%s\n\n%s", resp.Status, strings.Join(lines, "\n"), body), addr, "{host}")
}

// dialAndWrite connects to addr, with a deadline of 10 s for all it does,
// and writes b.
func dialAndWrite(t *testing.T, addr string, b []byte) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(b); err != nil {
		c.Close()
		t.Fatal(err)
	}
	return c
}

// upgradeText is an upgrade to /v1/ws with a header line per entry,
// "Host: {host}" standing for the server's address.
func upgradeText(line string, header []string) string {
	return line + "\r\n" + strings.Join(header, "\r\n") + "\r\n\r\n"
}

func upgradeHeader(extra ...string) []string {
	return append([]string{
		"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
		"Sec-WebSocket-Protocol: " + wire.Subprotocol,
	}, extra...)
}

func without(h []string, prefix string) []string {
	return slices.DeleteFunc(slices.Clone(h), func(l string) bool { return strings.HasPrefix(l, prefix) })
}

// Every upgrade is answered as net/http and echo answer it, word for
// word, whether the edge's listener serves it itself or hands it to
// net/http; and the listener serves itself exactly the upgrades it takes
// (net/http never sees their connections).
func TestUpgradesAnsweredAsNetHTTPAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	edge, seen := edgeServer(t, e)
	plain := httptest.NewServer(e.srv.HTTPServer().Handler) // net/http and echo alone
	t.Cleanup(plain.Close)
	ref := strings.TrimPrefix(plain.URL, "http://")
	hello := base64.RawURLEncoding.EncodeToString([]byte(`{"id":1,"op":"hello","client":"t/1","token":"` + testToken + `"}`))
	auth := "Authorization: Bearer " + testToken
	line := "GET /v1/ws HTTP/1.1"
	ok := upgradeHeader(auth)
	cases := []struct {
		name   string
		req    string
		served bool // by the edge's listener itself
	}{
		{"with a token", upgradeText(line, ok), true},
		{"its token in hello", upgradeText(line, upgradeHeader()), true},
		{"its hello in the header", upgradeText(line, upgradeHeader(wire.HelloHeader+": "+hello)), true},
		{"from a page of the daemon's", upgradeText(line, upgradeHeader(auth, "Origin: http://{host}", "Pragma: no-cache", "Cache-Control: no-cache")), true},
		{"a header twice", upgradeText(line, upgradeHeader(auth, "X-Thing: a", "X-Thing: b")), true},
		{"without the subprotocol", upgradeText(line, without(ok, "Sec-WebSocket-Protocol")), true},
		{"a wrong token", upgradeText(line, upgradeHeader("Authorization: Bearer nope")), false},
		{"a token that is not a bearer", upgradeText(line, upgradeHeader("Authorization: Basic eDp5")), false},
		{"a host not loopback", strings.ReplaceAll(upgradeText(line, ok), "{host}", "evil.example"), false},
		{"a host that is no name", strings.ReplaceAll(upgradeText(line, ok), "Host: {host}", "Host: a_b"), false},
		{"an origin of another scheme", upgradeText(line, upgradeHeader(auth, "Origin: https://{host}")), false},
		{"an origin of another host", upgradeText(line, upgradeHeader(auth, "Origin: http://localhost:1")), false},
		{"version 12", upgradeText(line, append(without(ok, "Sec-WebSocket-Version"), "Sec-WebSocket-Version: 12")), false},
		{"no key", upgradeText(line, without(ok, "Sec-WebSocket-Key")), false},
		{"no upgrade", upgradeText(line, without(ok, "Upgrade")), false},
		{"a hello header that is not one", upgradeText(line, upgradeHeader(auth, wire.HelloHeader+": !!")), false},
		{"a hello header twice", upgradeText(line, upgradeHeader(wire.HelloHeader+": "+hello, wire.HelloHeader+": "+hello)), false},
		{"HTTP/1.0", upgradeText("GET /v1/ws HTTP/1.0", ok), false},
		{"a query", upgradeText("GET /v1/ws?x=1 HTTP/1.1", ok), false},
		{"another route", upgradeText("GET /v1/wss HTTP/1.1", ok), false},
		{"POST", upgradeText("POST /v1/ws HTTP/1.1", append(ok, "Content-Length: 0")), false},
		{"two hosts", upgradeText(line, append(ok, "Host: {host}")), false},
		{"no host", upgradeText(line, without(ok, "Host")), false},
		{"a body", upgradeText(line, append(ok, "Content-Length: 2")) + "{}", false},
		{"an expectation", upgradeText(line, append(ok, "Expect: 100-continue")), false},
		{"a folded line", upgradeText(line, append(ok, "X-Thing: a", " b")), false},
		{"bare line feeds", strings.ReplaceAll(upgradeText(line, ok), "\r\n", "\n"), false},
		{"a space before a colon", upgradeText(line, append(ok, "X-Thing : a")), false},
		{"a control byte in a value", upgradeText(line, append(ok, "X-Thing: a\x01b")), false},
		{"a line without a colon", upgradeText(line, append(ok, "X-Thing")), false},
		{"many header lines", upgradeText(line, append(ok, slices.Repeat([]string{"X-Thing: a"}, upgradeHeadersMax)...)), false},
		{"a header longer than the edge reads", upgradeText(line, append(ok, "X-Thing: "+strings.Repeat("a", upgradeHeaderMax))), false},
	}
	for _, tc := range cases {
		before := seen.Load()
		got := rawExchange(t, edge, strings.ReplaceAll(tc.req, "{host}", edge))
		want := rawExchange(t, ref, strings.ReplaceAll(tc.req, "{host}", ref))
		if got != want {
			t.Errorf("%s: the edge answered\n%s\nnet/http answered\n%s", tc.name, got, want)
		}
		if served := seen.Load() == before; served != tc.served {
			t.Errorf("%s: served by the edge's listener itself: %v, want %v (answer %.40q)", tc.name, served, tc.served, got)
		}
	}
}

// What a client sends after its upgrade's header, before the 101 comes,
// is the websocket's first bytes: a hello frame written with the request
// is answered.
func TestUpgradeReadsWhatCameAfterTheHeader(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	addr, seen := edgeServer(t, e)
	hello, _ := json.Marshal(wire.Command{ID: 7, Op: wire.OpHello, Client: "t/1", Token: testToken})
	helloWithTheRequest(t, addr, upgradeHeader(), hello)
	if n := seen.Load(); n != 0 {
		t.Fatalf("net/http was handed %d connections, want none", n)
	}
}

// An upgrade the edge leaves to net/http that net/http serves (a
// Content-Length of 0 is not taken here) keeps every byte the edge read:
// a hello frame larger than net/http's buffer, sent with the request, is
// read whole and answered.
func TestUpgradeLeftToNetHTTPKeepsWhatTheEdgeRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	addr, seen := edgeServer(t, e)
	hello, _ := json.Marshal(wire.Command{ID: 7, Op: wire.OpHello, Client: "t/1", Token: testToken})
	hello = append(append([]byte("{"), bytes.Repeat([]byte(" "), 5000)...), hello[1:]...) // JSON's own blanks
	helloWithTheRequest(t, addr, upgradeHeader("Content-Length: 0"), hello)
	if n := seen.Load(); n != 1 {
		t.Fatalf("net/http was handed %d connections, want 1", n)
	}
}

// helloWithTheRequest writes an upgrade with header, and the hello frame
// of hello (id 7) after it in the same write, and fails t unless the
// upgrade is answered 101 and the hello ok.
func helloWithTheRequest(t *testing.T, addr string, header []string, hello []byte) {
	t.Helper()
	req := strings.ReplaceAll(upgradeText("GET /v1/ws HTTP/1.1", header), "{host}", addr)
	c := dialAndWrite(t, addr, append([]byte(req), maskedText(hello)...))
	defer c.Close()
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	var r wire.Reply
	if err := json.Unmarshal(readText(t, br), &r); err != nil || r.ID != 7 || !r.OK {
		t.Fatalf("hello's reply %+v (%v), want ok to id 7", r, err)
	}
}

// A connection the edge counted fresh at its accept and handed to
// net/http is counted once: net/http's StateNew leaves it in its place,
// with its age. Counted twice, the bound's overflow closed the oldest at
// once, whatever its grace.
func TestFreshConnsCountAConnectionOnce(t *testing.T) {
	t.Parallel()
	c := acceptedConn(t, testListener(t), "")
	f := freshConns{max: 1, left: make(chan struct{}, 1)}
	f.connState(c, http.StateNew)
	at := f.conns[0].at
	f.connState(c, http.StateNew)
	if len(f.conns) != 1 || f.conns[0].c != c || f.conns[0].at != at {
		t.Fatalf("fresh %v, want the one connection once, as it was", f.conns)
	}
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read: %v; want it open, and nothing to read", err)
	}
}

// The header of a connection the edge read first is due by the time set
// at its accept, however late net/http sets its own deadline.
func TestHeaderDeadlineHeldFromTheAccept(t *testing.T) {
	t.Parallel()
	raw := acceptedConn(t, testListener(t), "GET /v1/ws HTTP/1.1\r\n") // and no more
	c := newOpenConns(10).track(raw).(*openTCPConn)
	defer c.Close()
	c.headerBy = time.Now().Add(100 * time.Millisecond)
	c.SetReadDeadline(time.Now().Add(10 * time.Second)) // net/http's ReadHeaderTimeout, set late
	start := time.Now()
	buf := make([]byte, 64)
	for {
		if _, err := c.Read(buf); err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) > 5*time.Second {
				t.Fatalf("read: %v after %v; want the header's deadline", err, time.Since(start))
			}
			return
		}
	}
}

// A request whose header comes in pieces is read whole, and one that is
// not an upgrade is served by net/http from the bytes the edge read.
func TestUpgradeHeaderInPieces(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	addr, seen := edgeServer(t, e)
	for _, req := range []string{
		strings.ReplaceAll(upgradeText("GET /v1/ws HTTP/1.1", upgradeHeader("Authorization: Bearer "+testToken)), "{host}", addr),
		"GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\n\r\n",
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.(*net.TCPConn).SetNoDelay(true)
		for i := 0; i < len(req); i += 7 {
			if _, err := io.WriteString(c, req[i:min(i+7, len(req))]); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 101, false: 200}[strings.Contains(req, "/v1/ws")]; resp.StatusCode != want {
			t.Fatalf("%.20q in pieces: %s, want %d", req, resp.Status, want)
		}
	}
	if n := seen.Load(); n != 1 {
		t.Fatalf("net/http was handed %d connections, want the one of /healthz", n)
	}
}

// maskedText is a client's websocket text frame of p (under 64 KiB).
func maskedText(p []byte) []byte {
	key := [4]byte{1, 2, 3, 4}
	f := []byte{0x81, 0x80 | byte(len(p))}
	if len(p) >= 126 {
		f = []byte{0x81, 0x80 | 126, byte(len(p) >> 8), byte(len(p))}
	}
	f = append(f, key[:]...)
	for i, b := range p {
		f = append(f, b^key[i%4])
	}
	return f
}

// readText reads a server's unmasked text frame (under 64 KiB).
func readText(t testing.TB, br *bufio.Reader) []byte {
	t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		t.Fatal(err)
	}
	n := int(h[1] & 0x7f)
	if n == 126 {
		var l [2]byte
		if _, err := io.ReadFull(br, l[:]); err != nil {
			t.Fatal(err)
		}
		n = int(l[0])<<8 | int(l[1])
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(br, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// The listener's Close closes the connections whose first request it is
// reading, as http.Server's Close closes those net/http reads.
func TestUpgradeListenerCloseClosesWhatItReads(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	hs := e.srv.HTTPServer()
	ln := e.srv.Listener(testListener(t), nil)
	go hs.Serve(ln)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /v1/ws HTTP/1.1\r\n"); err != nil { // and no more
		t.Fatal(err)
	}
	ul := ln.(*upgradeListener)
	for deadline := time.Now().Add(5 * time.Second); ; { // until it is being read
		ul.mu.Lock()
		n := len(ul.reading)
		ul.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the connection is not being read")
		}
		runtime.Gosched()
	}
	hs.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	// EOF, or a reset if the request was not read yet.
	if n, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read %d, %v; want the connection closed", n, err)
	}
}
