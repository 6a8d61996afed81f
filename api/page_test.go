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
	e := newEnv(t, Options{})
	noToken := map[string]string{"Authorization": ""}
	for path, ctype := range map[string]string{
		"/":                             "text/html",
		"/assets/app.js":                "text/javascript",
		"/assets/protocol.js":           "text/javascript",
		"/assets/drawer.js":             "text/javascript",
		"/assets/markdown.js":           "text/javascript",
		"/assets/newsession.js":         "text/javascript",
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
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self' ws://127.0.0.1:", "frame-ancestors 'none'"} {
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
