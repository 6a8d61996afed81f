package provider

import (
	"strings"
	"sync"
	"testing"
)

func names(r *Registry) string {
	var out []string
	for _, p := range r.List().Providers {
		out = append(out, p.Name+"="+p.Model)
	}
	return strings.Join(out, " ")
}

// Reload adds, changes and removes profiles for the next Get, keeps what
// was registered in code, and keeps everything when the new config is
// refused. A provider got before a reload is left as it was.
func TestRegistryReload(t *testing.T) {
	t.Parallel()
	getenv := func(string) string { return "" }
	r, err := NewRegistry(Config{Providers: map[string]Profile{
		"a": {BaseURL: "http://a/v1", DefaultModel: "m1"},
		"b": {BaseURL: "http://b/v1", DefaultModel: "m1"},
	}}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	r.Register("custom", Echo{})
	before, err := r.Get("a")
	if err != nil {
		t.Fatal(err)
	}

	next := Config{DefaultProvider: "c", Providers: map[string]Profile{
		"a": {BaseURL: "http://a/v1", DefaultModel: "m2"}, // changed
		"c": {BaseURL: "http://c/v1", DefaultModel: "m1"}, // added; b removed
	}}
	if err := r.Reload(next, getenv); err != nil {
		t.Fatal(err)
	}
	if got, want := names(r), "echo= a=m2 c=m1 custom="; got != want {
		t.Fatalf("after reload: %s, want %s", got, want)
	}
	if r.Default() != "c" || r.Check("b") == nil {
		t.Fatalf("default %q, b: %v", r.Default(), r.Check("b"))
	}
	if before.(*OpenAI).defaultModel != "m1" {
		t.Fatalf("the provider got before the reload changed")
	}

	for _, bad := range []Config{
		{Providers: map[string]Profile{"d": {Kind: "nope", BaseURL: "http://d/v1"}}},
		{DefaultProvider: "ghost"},
		{Providers: map[string]Profile{"d": {}}},
	} {
		if err := r.Reload(bad, getenv); err == nil {
			t.Fatalf("%+v was accepted", bad)
		}
		if got, want := names(r), "echo= a=m2 c=m1 custom="; got != want || r.Default() != "c" {
			t.Fatalf("after a refused reload: %s (default %s), want %s", got, r.Default(), want)
		}
	}
}

// Turns that start while the profiles are reloaded read one table or the
// other, never half of one (run with -race).
func TestRegistryReloadWhileRead(t *testing.T) {
	t.Parallel()
	getenv := func(string) string { return "" }
	r, err := NewRegistry(Config{}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	one := Config{DefaultProvider: "x", Providers: map[string]Profile{"x": {BaseURL: "http://x/v1"}}}
	two := Config{DefaultProvider: "y", Providers: map[string]Profile{"y": {BaseURL: "http://y/v1"}}}
	if err := r.Reload(one, getenv); err != nil {
		t.Fatal(err)
	}
	r.Register("custom", Echo{})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := r.Get(""); err != nil {
					t.Errorf("the default does not resolve: %v", err)
					return
				}
				if l := r.List(); len(l.Providers) != 3 || l.Providers[2].Name != l.Default {
					t.Errorf("a list of two tables: %+v", l)
					return
				}
			}
		})
	}
	for i := range 200 {
		c := one
		if i%2 == 0 {
			c = two
		}
		if err := r.Reload(c, getenv); err != nil {
			t.Fatal(err)
		}
		r.Register("custom", Echo{})
	}
	close(stop)
	wg.Wait()
}
