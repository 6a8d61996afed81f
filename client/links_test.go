package client

import (
	"os"
	"path/filepath"
	"testing"
)

// A home's client puts the home's daemon key in the page links it makes
// and in those the daemon made, once; a server's client (a URL) puts none,
// as TLS proves that server; a link that is no page link is left alone.
func TestPageLinksCarryTheHomesKey(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	c, err := New(Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if k := c.LinkKey(); k != "" {
		t.Fatalf("LinkKey with no key file = %q", k)
	}
	if got := c.KeyedLink("http://127.0.0.1:7411/#token=almem_a"); got != "http://127.0.0.1:7411/#token=almem_a" {
		t.Fatalf("KeyedLink with no key file = %q", got)
	}
	if err := os.WriteFile(filepath.Join(home, DaemonKeyFile), []byte("00ff\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"http://127.0.0.1:7411/#token=almem_a":        "http://127.0.0.1:7411/#token=almem_a&k=00ff",
		"http://127.0.0.1:7411/#token=almem_a&k=beef": "http://127.0.0.1:7411/#token=almem_a&k=beef",
		"http://127.0.0.1:7411/":                      "http://127.0.0.1:7411/",
	} {
		if got := c.KeyedLink(in); got != want {
			t.Errorf("KeyedLink(%q) = %q, want %q", in, got, want)
		}
	}

	s, err := New(Options{URL: "https://albedo.example", Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.PageLink("s 1", "t+/="), "https://albedo.example/#session=s+1&token=t%2B%2F%3D"; got != want {
		t.Errorf("PageLink = %q, want %q", got, want)
	}
	if got, want := s.PageLink("", "t"), "https://albedo.example/#token=t"; got != want {
		t.Errorf("PageLink of the list = %q, want %q", got, want)
	}
	if got := s.KeyedLink("https://albedo.example/#token=almem_a"); got != "https://albedo.example/#token=almem_a" {
		t.Errorf("a server's KeyedLink = %q", got)
	}
}
