package api

import (
	"net/http"
	"strings"
	"testing"
)

// The page and its assets are served without a token, each with the
// strict policy and its own content type; what is not an asset is 404;
// the Host check holds for them as for the API.
func TestPageIsServedUnderItsPolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	noToken := map[string]string{"Authorization": ""}
	for path, ctype := range map[string]string{
		"/":                             "text/html",
		"/assets/app.js":                "text/javascript",
		"/assets/protocol.js":           "text/javascript",
		"/assets/drawer.js":             "text/javascript",
		"/assets/markdown.js":           "text/javascript",
		"/assets/newsession.js":         "text/javascript",
		"/assets/files.js":              "text/javascript",
		"/assets/uploads.js":            "text/javascript",
		"/assets/style.css":             "text/css",
		"/assets/vendor/purify.es.mjs":  "text/javascript",
		"/assets/vendor/marked.esm.js":  "text/javascript",
		"/assets/vendor/LICENSE.marked": "text/plain",
	} {
		code, h := e.do("GET", path, noToken, "", nil)
		if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), ctype) {
			t.Errorf("GET %s: %d %q, want 200 %s", path, code, h.Get("Content-Type"), ctype)
		}
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "img-src 'self' data: blob:;", "connect-src 'self' ws://127.0.0.1:", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s: the policy %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("GET %s: headers %v", path, h)
		}
	}
	for _, path := range []string{"/assets/", "/assets/nosuch.js", "/assets/../web.go", "/assets/index.html", "/assets/vendor/../../api/page.go"} {
		if code, _ := e.do("GET", path, noToken, "", nil); code != 404 {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
	}
	req, _ := http.NewRequest("GET", e.url+"/", nil)
	req.Host = "evil.example:80" // a DNS-rebinding page asking for ours
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("GET / with a foreign Host: %d, want 403", resp.StatusCode)
	}
}

// Behind a proxy that ends TLS (--insecure-no-tls) and says so, the
// websocket URL the daemon hands out (the page's policy, a share's or a
// bot's ws_url) is wss://; without the header, ws://.
func TestWSURLBehindATLSProxy(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	for _, tc := range []struct {
		hdr  map[string]string
		want string
	}{
		{nil, "ws://"},
		{map[string]string{"X-Forwarded-Proto": "https"}, "wss://"},
		{map[string]string{"X-Forwarded-Proto": "HTTPS, http"}, "wss://"},
		{map[string]string{"X-Forwarded-Proto": "http"}, "ws://"},
		{map[string]string{"Forwarded": `for=192.0.2.1;proto="https";host=h, proto=http`}, "wss://"},
		{map[string]string{"Forwarded": "for=192.0.2.1;proto=http"}, "ws://"},
	} {
		var share struct {
			WSURL string `json:"ws_url"`
		}
		if code, _ := e.do("POST", "/v1/sessions/s/shares", tc.hdr, "", &share); code != 201 || !strings.HasPrefix(share.WSURL, tc.want+"127.0.0.1:") {
			t.Errorf("%v: share %d, ws_url %q, want %s", tc.hdr, code, share.WSURL, tc.want)
		}
		hdr := map[string]string{"Authorization": ""}
		for k, v := range tc.hdr {
			hdr[k] = v
		}
		if _, h := e.do("GET", "/", hdr, "", nil); !strings.Contains(h.Get("Content-Security-Policy"), "connect-src 'self' "+tc.want+"127.0.0.1:") {
			t.Errorf("%v: the page's policy %q", tc.hdr, h.Get("Content-Security-Policy"))
		}
	}
}

// A Host that is not a name or address and a decimal port is refused
// before any route, so that nothing of it reaches the page's policy,
// which names the daemon's websocket by the Host it was reached by.
func TestMalformedHostNeverReachesThePolicy(t *testing.T) {
	t.Parallel()
	local := newEnv(t, Options{})
	public := newEnv(t, Options{Public: true, Hosts: []string{"*.team.example"}})
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	for _, tc := range []struct {
		e    *env
		host string
	}{
		{local, "127.0.0.1:1;script-src;x"},
		{local, "localhost:80,x"},
		{local, "[::1]:1'x"},
		{local, "localhost:"},
		{local, "127.0.0.1:99999"},
		{local, "[localhost]:80"},
		{public, "10.0.0.1:1;script-src;x"},
		{public, "a;script-src;x.team.example"},
		{public, "a'b.team.example:443"},
	} {
		req, _ := http.NewRequest("GET", tc.e.url+"/", nil)
		req.Host = tc.host
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("Host %q: %v", tc.host, err)
		}
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode > 499 {
			t.Errorf("Host %q: %d, want a 4xx", tc.host, resp.StatusCode)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); csp != "" {
			t.Errorf("Host %q: a policy %q", tc.host, csp)
		}
	}
}
