package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"albedo/client"
)

// Edits of config.toml reach the registry once they have settled (two
// reads alike); a broken edit keeps the profiles before and is logged
// once; settings only a start reads are logged as needing a restart.
func TestLiveConfigAppliesProfiles(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	path := filepath.Join(home, client.ConfigFile)
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const a = "[providers.a]\nbase_url = \"http://a/v1\"\n"
	const b = "[providers.b]\nbase_url = \"http://b/v1\"\n"
	write(a)
	text := readConfigText(path)
	reg, cfg, err := loadProviders(home)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	lc := &liveConfig{path: path, reg: reg, log: slog.New(slog.NewTextHandler(&logs, nil)), good: cfg, text: text, seen: text}

	write(a + b + "[daemon]\nlisten = \"127.0.0.1:1\"\n")
	lc.poll()
	if reg.Check("b") == nil {
		t.Fatalf("b applied at the first read of the edit, before it settled")
	}
	lc.poll()
	if err := reg.Check("b"); err != nil {
		t.Fatalf("b once settled: %v", err)
	}
	if s := logs.String(); !strings.Contains(s, "added=b") || !strings.Contains(s, "needs a restart to apply them\" settings=daemon.listen") {
		t.Fatalf("log:\n%s", s)
	}

	write(a + b + "[providers.c\n")
	lc.poll()
	lc.poll()
	lc.poll()
	if n := strings.Count(logs.String(), "config.toml not applied"); n != 1 || !strings.Contains(logs.String(), "line 6") {
		t.Fatalf("a broken edit logged %d times:\n%s", n, logs.String())
	}
	if reg.Check("a") != nil || reg.Check("b") != nil {
		t.Fatalf("a broken edit dropped profiles")
	}

	logs.Reset()
	write("default_provider = \"b\"\n" + b + "[daemon]\nlisten = \"127.0.0.1:1\"\n")
	lc.poll()
	lc.poll()
	if reg.Check("a") == nil || reg.Default() != "b" {
		t.Fatalf("a still there, or default %q", reg.Default())
	}
	if s := logs.String(); !strings.Contains(s, "removed=a") || strings.Contains(s, "restart") {
		t.Fatalf("log:\n%s", s)
	}
}
