package main

import "testing"

// Share links and tokens parse; anything else is refused with a reason.
func TestParseShare(t *testing.T) {
	t.Parallel()
	good := map[string]shareLink{
		"http://127.0.0.1:7411/#session=0190-ab&token=v_abc": {token: "v_abc", session: "0190-ab", base: "http://127.0.0.1:7411", port: 7411},
		"http://127.0.0.1:9/#session=s+1&token=t%2B%2F%3D":   {token: "t+/=", session: "s 1", base: "http://127.0.0.1:9", port: 9},
		"https://albedo.example/team/#session=a&token=b":     {token: "b", session: "a", base: "https://albedo.example/team"},
		"https://albedo.example:8443/#session=a&token=b":     {token: "b", session: "a", base: "https://albedo.example:8443", port: 8443},
		"  v_plainToken  ": {token: "v_plainToken"},
		// What `albedo members add` prints: a member's link names no session.
		"http://127.0.0.1:7411/#token=almem_abc":        {token: "almem_abc", base: "http://127.0.0.1:7411", port: 7411},
		"http://127.0.0.1:7411/#token=almem_abc&k=00ff": {token: "almem_abc", base: "http://127.0.0.1:7411", port: 7411},
	}
	for in, want := range good {
		if got, err := parseShare(in); err != nil || got != want {
			t.Errorf("parseShare(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ftp://x:1/#session=a&token=b", "http://127.0.0.1:7411/", "http://127.0.0.1:7411/#session=a",
		"http://h:port/#session=a&token=b", "http:///#session=a&token=b", "http://u:p@h/#session=a&token=b", "two words", "a/b"} {
		if got, err := parseShare(bad); err == nil {
			t.Errorf("parseShare(%q) = %+v, want an error", bad, got)
		}
	}
}
