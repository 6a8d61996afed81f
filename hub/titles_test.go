package hub

import (
	"context"
	"testing"

	"albedo/hub/provider"
	"albedo/wire"
)

// A title of first words keeps at most six of them and 48 runes, without
// markup or a trailing full stop; a profile with titles off, or a bot,
// leaves the session untitled.
func TestTitles(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"# Hello, world.":      "Hello, world",
		"why is the sky blue?": "why is the sky blue?",
		"`go test` fails here": "go test fails here",
		"a b c d e f g h":      "a b c d e f",
		"supercalifragilistic expialidocious and a very long word indeed": "supercalifragilistic expialidocious and a very",
		"   ": "",
	} {
		if got := firstWords(in); got != want {
			t.Errorf("firstWords(%q) = %q, want %q", in, got, want)
		}
	}
	h := newTestHub(t, Options{})
	mustCreate(t, h, "s")
	req := provider.Request{Messages: []provider.Message{{Role: wire.RoleUser, Text: "name me"}}}
	for _, p := range []provider.Provider{offProvider{}, botProvider{h: h, name: "b"}} {
		h.autoTitle(context.Background(), "s", p, req)
	}
	if s, err := h.Session(context.Background(), "s"); err != nil || s.Title != "" {
		t.Fatalf("titled while off: %q %v", s.Title, err)
	}
	h.autoTitle(context.Background(), "s", provider.Echo{}, req)
	if s, _ := h.Session(context.Background(), "s"); s.Title != "name me" {
		t.Fatalf("echo's session: %q", s.Title)
	}
}

// offProvider is echo with titles off.
type offProvider struct{ provider.Echo }

func (offProvider) Titles() string { return provider.TitlesOff }
