package api

import "testing"

// A reply that carries a new token is never kept by a cache on its way
// (a proxy, the browser's): shares and bots say no-store.
func TestTokenRepliesAreNotStored(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	for _, tc := range []struct{ path, body string }{
		{"/v1/sessions/s/shares", ""},
		{"/v1/bots", `{"name":"b"}`},
		{"/v1/tokens", `{"role":"owner","name":"o"}`},
	} {
		var out struct{ Token string }
		code, h := e.do("POST", tc.path, nil, tc.body, &out)
		if code != 201 || out.Token == "" {
			t.Fatalf("POST %s: %d, token %q", tc.path, code, out.Token)
		}
		if h.Get("Cache-Control") != "no-store" || h.Get("Pragma") != "no-cache" {
			t.Errorf("POST %s: Cache-Control %q, Pragma %q, want no-store, no-cache", tc.path, h.Get("Cache-Control"), h.Get("Pragma"))
		}
	}
}
