package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/http/httpguts"

	"albedo/hub"
	"albedo/wire"
)

// FuzzParseNonNegative: what it accepts is a decimal integer ≥ 0 that
// reads back the same; what it refuses is a bad_request naming the
// parameter.
func FuzzParseNonNegative(f *testing.F) {
	for _, s := range []string{"", "0", "17", "-1", "1e3", "99999999999999999999", " 5", "0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		n, err := parseNonNegative("after", v, 7)
		switch {
		case v == "":
			if err != nil || n != 7 {
				t.Fatalf("empty: %d %v", n, err)
			}
		case err == nil:
			back, perr := strconv.ParseInt(v, 10, 64)
			if n < 0 || perr != nil || back != n {
				t.Fatalf("parseNonNegative(%q) = %d", v, n)
			}
		default:
			we, ok := err.(*wire.Error)
			if !ok || we.Code != wire.CodeBadRequest || !strings.Contains(we.Message, "after") {
				t.Fatalf("parseNonNegative(%q): %v", v, err)
			}
		}
	})
}

// FuzzHTTPBodies sends any bytes as the JSON body of every route that
// reads one, and any values as the history route's query parameters: the
// answer is never a 500, and an error is always the contract's error body.
func FuzzHTTPBodies(f *testing.F) {
	h, err := hub.Open(context.Background(), filepath.Join(f.TempDir(), "albedo.db"), hub.Options{}, nil)
	if err != nil {
		f.Fatal(err)
	}
	srv := New(h, Options{Token: testToken, Boot: "b"}, nil)
	hs := httptest.NewServer(srv.Handler())
	f.Cleanup(func() { srv.Close(); hs.Close(); h.Close(context.Background()) })
	if _, _, err := h.CreateSession(context.Background(), "s", wire.SessionCreate{}); err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{`{}`, `{"title":"t","model":"m"}`, `{"text":"hi"}`, `{"name":"b1","sessions":["s"]}`,
		`{"title":5}`, `{"effort":null}`, `{"title":"a\u0000"}`, `[`, ``, `{"sessions":"s"}`} {
		f.Add([]byte(s), "1", "5", "")
	}
	routes := []struct{ method, path string }{
		{"POST", "/v1/sessions"}, {"PUT", "/v1/sessions/fz"}, {"PATCH", "/v1/sessions/s"},
		{"PUT", "/v1/sessions/s/inputs/0190a8a0-0000-7000-8000-00000000ffff"}, {"POST", "/v1/bots"},
	}
	client := hs.Client()
	f.Fuzz(func(t *testing.T, body []byte, after, limit, before string) {
		for _, rt := range routes {
			req, _ := http.NewRequest(rt.method, hs.URL+rt.path, strings.NewReader(string(body)))
			req.Header.Set("Authorization", "Bearer "+testToken)
			req.Header.Set("If-None-Match", "*")
			req.Header.Set("If-Match", `"1"`)
			checkAnswer(t, client, req, string(body))
		}
		q := url.Values{"after": {after}, "limit": {limit}, "before": {before}}.Encode()
		req, _ := http.NewRequest("GET", hs.URL+"/v1/sessions/s/events?"+q, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		checkAnswer(t, client, req, q)
	})
}

// checkAnswer fails on a 500, or on an error that is not the contract's
// error body.
func checkAnswer(t *testing.T, c *http.Client, req *http.Request, input string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 500 {
		t.Fatalf("%s %s with %q: %d", req.Method, req.URL.Path, input, resp.StatusCode)
	}
	if resp.StatusCode >= 400 {
		var eb wire.ErrorBody
		if json.NewDecoder(resp.Body).Decode(&eb) != nil || eb.Error == nil || eb.Error.Code == "" {
			t.Fatalf("%s %s with %q: %d without an error body", req.Method, req.URL.Path, input, resp.StatusCode)
		}
	}
}

// FuzzForwardedTLS: a proxy's headers say https only when the first value
// of X-Forwarded-Proto, or else the first proto= of Forwarded, is https;
// never a panic.
func FuzzForwardedTLS(f *testing.F) {
	for _, s := range [][2]string{{"https", ""}, {"HTTP, https", ""}, {"", "for=1.2.3.4;proto=https"},
		{"", `proto="HTTPS", proto=http`}, {"", "proto"}, {" https ", ";;proto=https;"}, {"", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, xfp, fwd string) {
		h := http.Header{}
		if xfp != "" {
			h.Set("X-Forwarded-Proto", xfp)
		}
		if fwd != "" {
			h.Set("Forwarded", fwd)
		}
		got := forwardedTLS(h)
		said := h.Get("Forwarded")
		if h.Get("X-Forwarded-Proto") != "" {
			said = h.Get("X-Forwarded-Proto")
		}
		first, _, _ := strings.Cut(said, ",")
		if got && !strings.Contains(strings.ToLower(first), "https") {
			t.Fatalf("X-Forwarded-Proto %q, Forwarded %q: https, which its first value does not say", xfp, fwd)
		}
	})
}

// FuzzAllowedHost: on loopback the daemon answers to a Host header only
// when it names localhost or a loopback address (with or without a port,
// brackets or a final dot); beyond loopback, also to an IP address or one
// of the operator's names. A Host it answers to holds nothing but a name
// and a decimal port, so that it can go into the page's policy as it is.
// Never a panic.
func FuzzAllowedHost(f *testing.F) {
	for _, s := range []string{"localhost", "LOCALHOST.:8080", "127.0.0.1:1", "[::1]:80", "127.1.2.3", "evil.example",
		"localhost.evil.example", "10.0.0.1", "a.team.example", "x.y.team.example", "albedo.example.com.", "", ":",
		"127.0.0.1:1;script-src;x", "a;b.team.example", "[localhost]:80", "::1", "localhost:"} {
		f.Add(s)
	}
	local := &Server{}
	public := &Server{opts: Options{Public: true, Hosts: []string{"albedo.example.com", "*.team.example"}}}
	f.Fuzz(func(t *testing.T, host string) {
		name := host
		if h, _, err := net.SplitHostPort(host); err == nil {
			name = h
		}
		name = strings.TrimSuffix(strings.Trim(name, "[]"), ".")
		ip := net.ParseIP(name)
		loop := strings.EqualFold(name, "localhost") || (ip != nil && ip.IsLoopback())
		if local.allowedHost(host) && !loop {
			t.Fatalf("on loopback, Host %q is allowed, and is not a loopback name", host)
		}
		if public.allowedHost(host) && !loop && ip == nil {
			lower := strings.ToLower(name)
			if lower != "albedo.example.com" && !strings.HasSuffix(lower, ".team.example") {
				t.Fatalf("beyond loopback, Host %q is allowed, and is none of the operator's names", host)
			}
		}
		if local.allowedHost(host) || public.allowedHost(host) {
			if i := strings.IndexFunc(host, func(r rune) bool { return !strings.ContainsRune(hostChars, r) }); i >= 0 {
				t.Fatalf("Host %q is allowed, and holds %q", host, host[i:])
			}
			if _, port, err := net.SplitHostPort(host); err == nil {
				if _, err := strconv.ParseUint(port, 10, 16); err != nil {
					t.Fatalf("Host %q is allowed, with the port %q", host, port)
				}
			}
		}
	})
}

// hostChars are the characters of a name or address and a port.
const hostChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]"

// FuzzUpgradeRequest: a header upgradeRequest takes is one net/http reads
// as the same request (method, path, Host, every header line), and would
// serve: one Host, every name and value valid.
func FuzzUpgradeRequest(f *testing.F) {
	f.Add([]byte(upgradeText("GET /v1/ws HTTP/1.1", upgradeHeader("Authorization: Bearer x", "Pragma: no-cache"))))
	f.Add([]byte("GET /v1/ws HTTP/1.1\r\nHost: a\r\nX: a\r\nx: b \r\n\r\n"))
	f.Add([]byte("GET /v1/ws HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n"))
	f.Add([]byte("GET /v1/ws HTTP/1.1\nHost: a\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := upgradeRequest(b)
		if !ok {
			return
		}
		want, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b)))
		if err != nil {
			t.Fatalf("taken, but net/http reads %q as: %v", b, err)
		}
		hosts := 0 // net/http's reader takes Host out of the header
		for _, line := range strings.Split(string(b), "\r\n")[1:] {
			if name, _, _ := strings.Cut(line, ":"); strings.EqualFold(name, "Host") {
				hosts++
			}
		}
		if hosts != 1 {
			t.Fatalf("taken with %d Host lines: %q", hosts, b)
		}
		for k, vs := range want.Header {
			for _, v := range vs {
				if !httpguts.ValidHeaderFieldName(k) || !httpguts.ValidHeaderFieldValue(v) {
					t.Fatalf("taken with a header net/http's server refuses: %q: %q", k, v)
				}
			}
		}
		if r.Method != want.Method || r.URL.String() != want.URL.String() || r.RequestURI != want.RequestURI ||
			r.Host != want.Host || r.Proto != want.Proto || want.ContentLength != 0 || !reflect.DeepEqual(r.Header, want.Header) {
			t.Fatalf("%q: taken as %s %s %s host %q header %v; net/http: %s %s %s host %q header %v, length %d",
				b, r.Method, r.RequestURI, r.Proto, r.Host, r.Header, want.Method, want.RequestURI, want.Proto, want.Host, want.Header, want.ContentLength)
		}
	})
}
