package api

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"albedo/hub"
	"albedo/hub/provider"
)

// Every session object names the provider a turn of it would use now, as
// resolved_provider: its own provider, else the daemon's default_provider
// (a profile here), else echo; a daemon booted without that default says
// echo of the same stored session. Clients show it instead of guessing.
func TestSessionSaysItsResolvedProvider(t *testing.T) {
	t.Parallel()
	reg, err := provider.NewRegistry(provider.Config{DefaultProvider: "local", Providers: map[string]provider.Profile{
		"local": {Kind: "openai", BaseURL: "http://127.0.0.1:1/v1"},
	}}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, Options{}, hub.Options{Providers: reg})
	check := func(what string, s map[string]any, provider, resolved string) {
		t.Helper()
		if s["provider"] != provider || s["resolved_provider"] != resolved {
			t.Errorf("%s: provider %v, resolved_provider %v; want %q and %q", what, s["provider"], s["resolved_provider"], provider, resolved)
		}
	}

	var made map[string]any
	if code, _ := e.do("POST", "/v1/sessions", nil, `{"title":"none named"}`, &made); code != http.StatusCreated {
		t.Fatalf("POST: %d", code)
	}
	check("POST without a provider", made, "", "local")
	id := made["id"].(string)
	var echo map[string]any
	if code, _ := e.do("PUT", "/v1/sessions/echoed", map[string]string{"If-None-Match": "*"}, `{"provider":"echo"}`, &echo); code != http.StatusCreated {
		t.Fatalf("PUT: %d", code)
	}
	check("PUT with echo", echo, "echo", "echo")

	var got map[string]any
	_, hdr := e.do("GET", "/v1/sessions/"+id, nil, "", &got)
	check("GET", got, "", "local")
	var patched map[string]any
	if code, _ := e.do("PATCH", "/v1/sessions/"+id, map[string]string{"If-Match": hdr.Get("ETag")}, `{"model":"m"}`, &patched); code != http.StatusOK {
		t.Fatalf("PATCH: %d", code)
	}
	check("PATCH", patched, "", "local")
	var list struct{ Sessions []map[string]any }
	e.do("GET", "/v1/sessions", nil, "", &list)
	if len(list.Sessions) != 2 {
		t.Fatalf("list: %v", list.Sessions)
	}
	for _, s := range list.Sessions {
		if s["id"] == id {
			check("the list's", s, "", "local")
		} else {
			check("the list's", s, "echo", "echo")
		}
	}

	// The same store under a daemon whose config.toml names no default.
	plain, err := hub.Open(context.Background(), e.path, hub.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Close(context.Background()) })
	s, err := plain.Session(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var again map[string]any
	b, _ := json.Marshal(s)
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatal(err)
	}
	check("under a daemon without default_provider", again, "", "echo")
}
