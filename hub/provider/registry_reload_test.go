package provider

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"albedo/hub/mcphost"
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

// A profile's mcp list names the MCP servers its sessions may use (nil
// when it names none: every one); a name that is no [mcp.NAME] table
// refuses the config.
func TestAProfilesMCPServers(t *testing.T) {
	none := []string{}
	c := Config{DefaultProvider: "a", MCP: map[string]mcphost.ServerConfig{"fs": {}, "web": {}},
		Providers: map[string]Profile{
			"a": {BaseURL: "http://x", MCP: []string{"fs"}},
			"b": {BaseURL: "http://x"},
			"c": {BaseURL: "http://x", MCP: none},
		}}
	r, err := NewRegistry(c, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if may := r.MCPServers("a"); may == nil || !may("fs") || may("web") {
		t.Fatal("a may use fs alone")
	}
	if may := r.MCPServers(""); may == nil || !may("fs") || may("web") {
		t.Fatal("the default provider's list")
	}
	if r.MCPServers("b") != nil {
		t.Fatal("b names none, and may use every one")
	}
	if may := r.MCPServers("c"); may == nil || may("fs") {
		t.Fatal("c's empty list allows none")
	}
	c.Providers["b"] = Profile{BaseURL: "http://x", MCP: []string{"nope"}}
	if _, err := NewRegistry(c, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), `"nope", which is no [mcp.nope] table`) {
		t.Fatalf("an unknown server: %v", err)
	}
}

// config.toml's [mcp.NAME] tables: a value from the environment or a
// file as an inline table; a key no table has is refused.
func TestLoadConfigReadsMCPTables(t *testing.T) {
	path := t.TempDir() + "/config.toml"
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`[mcp.fs]
command = ["node", "server.js", "/srv"]
env = { TOKEN = { env = "FS_TOKEN" }, MODE = "ro" }
sessions = ["s1"]
idle_timeout = "2m"

[mcp.web]
url = "https://mcp.example/mcp"
headers = { Authorization = { file = "/etc/token" } }
`)
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	fs, web := c.MCP["fs"], c.MCP["web"]
	if len(fs.Command) != 3 || fs.Env["TOKEN"].Env != "FS_TOKEN" || fs.Env["MODE"].Text != "ro" || fs.Sessions[0] != "s1" ||
		fs.IdleTimeout.Duration != 2*time.Minute || web.Headers["Authorization"].File != "/etc/token" {
		t.Fatalf("read %+v", c.MCP)
	}
	write("[mcp.fs]\ncomand = [\"x\"]\n")
	if _, err := LoadConfig(path); err == nil || !strings.Contains(err.Error(), "mcp.fs.comand") {
		t.Fatalf("an unknown key: %v", err)
	}
	write("[mcp.fs]\ncommand = [\"x\"]\nenv = { A = { secret = \"y\" } }\n")
	if _, err := LoadConfig(path); err == nil {
		t.Fatal("a value of neither env nor file was taken")
	}
}
