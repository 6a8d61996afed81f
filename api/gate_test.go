package api

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"albedo/api/ws"
	"albedo/hub"
	"albedo/wire"
)

// closeConn is a net.Conn that only records whether it was closed.
type closeConn struct {
	net.Conn
	closed bool
}

func (c *closeConn) Close() error { c.closed = true; return nil }

// Past its bound (which only several listeners together can pass), a new
// connection that has not sent a request closes the oldest such one; one
// that has sent its request no longer counts.
func TestFreshConnsEvictTheOldest(t *testing.T) {
	t.Parallel()
	f := freshConns{max: 2}
	c := []*closeConn{{}, {}, {}, {}}
	f.connState(c[0], http.StateNew)
	f.connState(c[1], http.StateNew)
	f.drop(c[1]) // its request is served (handler)
	f.connState(c[2], http.StateNew)
	if c[0].closed || c[1].closed || c[2].closed {
		t.Fatalf("closed within the bound: %v %v %v", c[0].closed, c[1].closed, c[2].closed)
	}
	f.connState(c[3], http.StateNew) // a third fresh one: the oldest goes
	if !c[0].closed || c[2].closed || c[3].closed {
		t.Fatalf("closed: %v %v %v, want only the oldest fresh one", c[0].closed, c[2].closed, c[3].closed)
	}
	if len(f.conns) != 2 || f.conns[0].c != c[2] || f.conns[1].c != c[3] {
		t.Fatalf("fresh connections %v, want the third and the fourth", f.conns)
	}
}

// At the bound, accepting waits: for a fresh connection to send its
// request (nothing is closed), or for the oldest to have waited
// freshGrace (it is closed).
func TestFreshConnsMakeRoomInOrder(t *testing.T) {
	t.Parallel()
	f := freshConns{max: 2, left: make(chan struct{}, 1)}
	c := []*closeConn{{}, {}}
	f.connState(c[0], http.StateNew)
	f.connState(c[1], http.StateNew)
	roomed := make(chan time.Time, 1)
	go func() { f.room(nil); roomed <- time.Now() }()
	select {
	case <-roomed:
		t.Fatal("room at the bound before anyone left")
	case <-time.After(freshGrace / 5):
	}
	f.drop(c[1]) // its request is served (handler)
	<-roomed
	if c[0].closed || c[1].closed {
		t.Fatalf("closed: %v %v, want none", c[0].closed, c[1].closed)
	}

	f.connState(c[1], http.StateNew) // again at the bound; c[0] is the oldest
	start := time.Now()
	f.room(nil)
	if waited := time.Since(start); !c[0].closed || c[1].closed {
		t.Fatalf("after %v: closed %v %v, want the oldest only", waited, c[0].closed, c[1].closed)
	}
	if len(f.conns) != 1 || f.conns[0].c != c[1] {
		t.Fatalf("fresh %v, want the second only", f.conns)
	}
}

// At the bound, with every fresh connection's request waiting unread (a
// storm the daemon is behind on), accepting one more at a time does not
// look at each of them again for each accept: the daemon would spend its
// accept loop on system calls, more the bigger the storm.
func TestFreshConnsAtTheBoundLookAgainOnlyAfterAWhile(t *testing.T) {
	t.Parallel()
	const max, accepts = 50, 100
	var looks atomic.Int64
	// left is unbuffered: a send goes through only while room waits.
	f := freshConns{max: max, left: make(chan struct{}), unread: func(net.Conn) bool { looks.Add(1); return true }}
	behind := time.Now().Add(-time.Minute)
	fresh := func() {
		f.connState(&closeConn{}, http.StateNew)
		f.mu.Lock()
		f.conns[len(f.conns)-1].at = behind
		f.mu.Unlock()
	}
	for range max {
		fresh()
	}
	returned := make(chan struct{})
	go func() { // the daemon, reading one request each time room waits
		for range accepts {
			f.left <- struct{}{}
			f.mu.Lock()
			oldest := f.conns[0].c
			f.mu.Unlock()
			f.drop(oldest) // its request is served (handler)
			// connState's poke is lost if room was not waiting just then.
			select {
			case f.left <- struct{}{}:
				<-returned
			case <-returned:
			}
		}
	}()
	start := time.Now()
	for range accepts { // the accept loop
		f.room(nil)
		returned <- struct{}{}
		fresh()
	}
	// A look at most each freshGrace/5, and one to begin with.
	if n, most := looks.Load(), max*(2+int64(time.Since(start)/(freshGrace/5))); n > most {
		t.Fatalf("%d accepts at the bound looked at a connection %d times, want at most %d", accepts, n, most)
	}
	for _, fc := range f.conns {
		if fc.c.(*closeConn).closed {
			t.Fatal("a connection with its request unread was closed")
		}
	}
}

// Only a request that proved a token keeps its connection alive.
func TestKeepAliveOnlyWithAToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	hs := httptest.NewServer(e.srv.HTTPServer().Handler)
	t.Cleanup(hs.Close)
	cases := []struct {
		name, path, token string
		close             bool
		host              string
	}{
		{"a host that is not loopback", "/v1/sessions", testToken, true, "evil.example"},
		{"healthz", "/healthz", "", true, ""},
		{"no token", "/v1/sessions", "", true, ""},
		{"wrong token", "/v1/sessions", "nope", true, ""},
		{"unknown route", "/nothing", "", true, ""},
		{"owner", "/v1/sessions", testToken, false, ""},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest("GET", hs.URL+tc.path, nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Close != tc.close {
			t.Errorf("%s: the connection closes: %v, want %v", tc.name, resp.Close, tc.close)
		}
	}
}

// Websockets that will say their token in hello wait at most MaxPreHello
// at a time; past that an upgrade is refused with 429 too_many, and a
// hello makes room.
func TestPreHelloWebsocketsAreBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{MaxPreHello: 2})
	dial := func() (*websocket.Conn, *http.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return websocket.Dial(ctx, e.url+"/v1/ws", &websocket.DialOptions{Subprotocols: []string{wire.Subprotocol}})
	}
	var waiting []*websocket.Conn
	for range 2 {
		c, _, err := dial()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.CloseNow() })
		waiting = append(waiting, c)
	}
	if _, resp, err := dial(); err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a third websocket without hello: %v %v, want 429", resp, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := waiting[0].Write(ctx, websocket.MessageText, wire.Encode(wire.Command{ID: 1, Op: wire.OpHello, Token: testToken})); err != nil {
		t.Fatal(err)
	}
	if _, _, err := waiting[0].Read(ctx); err != nil { // its hello reply: it has left the waiting
		t.Fatal(err)
	}
	c, _, err := dial()
	if err != nil {
		t.Fatalf("after a hello, a new websocket: %v", err)
	}
	c.CloseNow()
	// The owner, with its token in the header, never waits for hello.
	owner := e.dial(true)
	owner.Hello()
}

// On loopback, a request whose Host is not a loopback name is refused:
// a web page that rebinds its own name to 127.0.0.1 cannot reach the
// daemon (DNS rebinding).
func TestHostMustBeLoopback(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	cases := []struct {
		host string
		ok   bool
	}{
		{"127.0.0.1:1234", true}, {"localhost:80", true}, {"LOCALHOST", true}, {"[::1]:9", true}, {"127.1.2.3", true},
		{"evil.example:1234", false}, {"localhost.evil.example", false}, {"10.0.0.1", false},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest("GET", e.url+"/v1/sessions", nil)
		req.Host = tc.host
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if ok := resp.StatusCode == 200; ok != tc.ok {
			t.Errorf("Host %q: %d, want served: %v", tc.host, resp.StatusCode, tc.ok)
		}
	}
}

// Beyond loopback the Host check stays strict: an IP address (which no
// DNS name can stand for), a loopback name, or one of the names the
// operator gave (its certificate's, --host; a wildcard covers one label).
func TestPublicHostsAreTheOperatorsNames(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Public: true, Hosts: []string{"albedo.example.com", "*.team.example"}})
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	cases := []struct {
		host string
		ok   bool
	}{
		{"albedo.example.com", true}, {"ALBEDO.example.com.:443", true}, {"10.0.0.1:8443", true}, {"[2001:db8::1]:8443", true},
		{"localhost", true}, {"a.team.example", true},
		{"evil.example", false}, {"albedo.example.com.evil.example", false}, {"team.example", false},
		{"a.b.team.example", false},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest("GET", e.url+"/v1/sessions", nil)
		req.Host = tc.host
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error wire.Error }
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if ok := resp.StatusCode == 200; ok != tc.ok {
			t.Errorf("Host %q: %d, want served: %v", tc.host, resp.StatusCode, tc.ok)
		}
		if !tc.ok && (resp.StatusCode != http.StatusForbidden || !strings.Contains(body.Error.Message, "--host")) {
			t.Errorf("Host %q: %d %q, want 403 naming --host", tc.host, resp.StatusCode, body.Error.Message)
		}
	}
}

// On loopback too the daemon answers to the names the operator gave
// (--host, its certificate's), so that a proxy on the machine can forward
// a public name to it; other names and other IP addresses stay refused.
func TestLoopbackAnswersToTheOperatorsNames(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Hosts: []string{"albedo.example.com", "*.team.example"}})
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	cases := []struct {
		host string
		ok   bool
	}{
		{"albedo.example.com", true}, {"ALBEDO.example.com.:443", true}, {"a.team.example:8443", true}, {"127.0.0.1:1", true},
		{"evil.example", false}, {"team.example", false}, {"10.0.0.1", false},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest("GET", e.url+"/v1/sessions", nil)
		req.Host = tc.host
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if ok := resp.StatusCode == 200; ok != tc.ok {
			t.Errorf("Host %q: %d, want served: %v", tc.host, resp.StatusCode, tc.ok)
		}
	}
}

// A websocket from a page of another origin is refused before the
// upgrade, whatever its token (coder/websocket checks Origin against Host).
func TestCrossOriginWebsocketRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, e.url+"/v1/ws", &websocket.DialOptions{Subprotocols: []string{wire.Subprotocol},
		HTTPHeader: http.Header{"Authorization": {"Bearer " + testToken}, "Origin": {"http://evil.example"}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin websocket: %v %v, want 403", resp, err)
	}
}

// An Origin of another scheme than the one the daemon is reached by is
// another origin on the same host (a page served in clear to a daemon on
// TLS, or the other way round): its websocket is refused before the
// upgrade, and so is any request it makes. Behind a proxy that ends TLS
// and says so (X-Forwarded-Proto), the daemon is reached by https.
func TestOriginOfAnotherSchemeRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	tlsSrv := httptest.NewTLSServer(e.srv.Handler())
	t.Cleanup(tlsSrv.Close)
	plain := strings.TrimPrefix(e.url, "http://")
	secure := strings.TrimPrefix(tlsSrv.URL, "https://")
	for _, tc := range []struct {
		name, url, origin, proto string
		ok                       bool
	}{
		{"plain, http Origin", "ws://" + plain, "http://" + plain, "", true},
		{"plain, https Origin", "ws://" + plain, "https://" + plain, "", false},
		{"TLS, https Origin", "wss://" + secure, "https://" + secure, "", true},
		{"TLS, http Origin", "wss://" + secure, "http://" + secure, "", false},
		{"behind a TLS proxy, https Origin", "ws://" + plain, "https://" + plain, "https", true},
		{"behind a TLS proxy, http Origin", "ws://" + plain, "http://" + plain, "https", false},
		{"no Origin", "ws://" + plain, "", "", true},
	} {
		hdr := http.Header{"Authorization": {"Bearer " + testToken}}
		if tc.origin != "" {
			hdr.Set("Origin", tc.origin)
		}
		if tc.proto != "" {
			hdr.Set("X-Forwarded-Proto", tc.proto)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, resp, err := websocket.Dial(ctx, tc.url+"/v1/ws", &websocket.DialOptions{Subprotocols: []string{wire.Subprotocol},
			HTTPClient: tlsSrv.Client(), HTTPHeader: hdr})
		cancel()
		if tc.ok && err != nil {
			t.Errorf("%s: %v, want the upgrade", tc.name, err)
		}
		if !tc.ok && (err == nil || resp == nil || resp.StatusCode != http.StatusForbidden) {
			t.Errorf("%s: %v %v, want 403", tc.name, resp, err)
		}
		if c != nil {
			c.CloseNow()
		}
		req, _ := http.NewRequest("GET", strings.Replace(tc.url, "ws", "http", 1)+"/v1/sessions", nil)
		req.Header = hdr
		r, err := tlsSrv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if ok := r.StatusCode == 200; ok != tc.ok {
			t.Errorf("%s: GET /v1/sessions %d, want served: %v", tc.name, r.StatusCode, tc.ok)
		}
	}
}

// Channels per connection are bounded: a hello with more subs than the
// limit, or a sub past it, gets too_many and watches nothing more.
func TestChannelsPerConnectionAreBounded(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, Options{}, hub.Options{MaxChannels: 2})
	for _, id := range []string{"a", "b", "c"} {
		e.create(id)
	}
	w := e.dial(true)
	w.Send(wire.Command{ID: 1, Op: wire.OpHello, Subs: []wire.Sub{{Session: "a"}, {Session: "b"}, {Session: "c"}}})
	if r := w.Reply(1); r.OK || r.Error == nil || r.Error.Code != wire.CodeTooMany {
		t.Fatalf("hello with 3 subs, limit 2: %+v", r)
	}
	w2 := e.dial(true)
	w2.Hello(wire.Sub{Session: "a"}, wire.Sub{Session: "b"})
	w2.Send(wire.Command{ID: 2, Op: wire.OpSub, Session: "c"})
	if r := w2.Reply(2); r.OK || r.Error == nil || r.Error.Code != wire.CodeTooMany {
		t.Fatalf("a third sub, limit 2: %+v", r)
	}
}

// The health checks answer whatever Host a balancer's probe sends, or
// none (haproxy's plain `option httpchk GET /readyz` is HTTP/1.0 without
// one); every other route keeps the Host check.
func TestHealthChecksAnswerAnyHost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	addr := strings.TrimPrefix(e.url, "http://")
	probe := func(request string) string {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, request); err != nil {
			t.Fatal(err)
		}
		status, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(status)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		for _, req := range []string{
			"GET " + path + " HTTP/1.0\r\n\r\n",
			"GET " + path + " HTTP/1.1\r\nHost: node-3.internal:8080\r\nConnection: close\r\n\r\n",
		} {
			if got := probe(req); !strings.HasSuffix(got, " 200 OK") {
				t.Errorf("%q: %s, want 200", req, got)
			}
		}
	}
	if got := probe("GET /v1/sessions HTTP/1.1\r\nHost: node-3.internal:8080\r\nAuthorization: Bearer " + testToken + "\r\nConnection: close\r\n\r\n"); !strings.Contains(got, " 403 ") {
		t.Errorf("the API with a foreign Host: %s, want 403", got)
	}
}

// acceptedConn returns the daemon's side of a loopback connection on
// which the client has written send, once send shows as unread there.
func acceptedConn(t *testing.T, ln net.Listener, send string) net.Conn {
	t.Helper()
	cl, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	if send != "" {
		if _, err := cl.Write([]byte(send)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for deadline := time.Now().Add(5 * time.Second); send != "" && !ws.Unread(c); { // the bytes cross loopback
		if time.Now().After(deadline) {
			t.Fatal("the written request never showed as unread")
		}
		time.Sleep(time.Millisecond)
	}
	return c
}

// testListener is a loopback listener, closed when t ends.
func testListener(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// Past freshGrace, room closes a fresh connection that sent nothing, and
// keeps one whose request waits unread in its socket, even when that one
// is older: a daemon busy with a storm has not got to it yet.
func TestFreshConnsKeepTheUnread(t *testing.T) {
	t.Parallel()
	ln := testListener(t)
	honest := acceptedConn(t, ln, "GET /v1/ws HTTP/1.1\r\n")
	idle := acceptedConn(t, ln, "")
	f := freshConns{max: 2, left: make(chan struct{}, 1)}
	f.connState(honest, http.StateNew)
	f.connState(idle, http.StateNew)
	f.room(nil)
	if len(f.conns) != 1 || f.conns[0].c != honest {
		t.Fatalf("fresh %v, want the one with a request unread", f.conns)
	}
	if _, err := idle.Read(make([]byte, 1)); err == nil {
		t.Fatal("the idle connection is still open")
	}
}

// A fresh connection whose request waits unread keeps its place however
// long the daemon takes to get to it: closed, every client of a storm the
// daemon is behind on came again (EOF before its upgrade).
func TestFreshConnsKeepTheUnreadWhileTheDaemonIsBehind(t *testing.T) {
	t.Parallel()
	c := acceptedConn(t, testListener(t), "GET /v1/ws HTTP/1.1\r\n")
	f := freshConns{max: 1, left: make(chan struct{}, 1)}
	f.connState(c, http.StateNew)
	f.conns[0].at = time.Now().Add(-time.Minute) // the daemon is a minute behind
	if i, _ := f.idlest(time.Now()); i >= 0 {
		t.Fatal("a connection with its request unread is to be closed")
	}
}
