package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"albedo/client"
)

// A daemon keeps the port of the one before it, and no token; a port
// taken since gives another port; a broken file gives none.
func TestStablePort(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	first := loadStable(home)
	if first.Port != 0 {
		t.Fatalf("first %+v", first)
	}
	ln, err := listenStable(defaultAddr, first)
	if err != nil {
		t.Fatal(err)
	}
	first.Port = ln.Addr().(*net.TCPAddr).Port
	if err := saveStable(home, first); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(home, client.StableFile)); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if b, _ := os.ReadFile(filepath.Join(home, client.StableFile)); strings.Contains(string(b), "token") {
		t.Fatalf("daemon.stable keeps a token: %s", b)
	}
	// Still taken: another port.
	again := loadStable(home)
	if again != first {
		t.Fatalf("loaded %+v, saved %+v", again, first)
	}
	ln2, err := listenStable(defaultAddr, again)
	if err != nil {
		t.Fatal(err)
	}
	if ln2.Addr().(*net.TCPAddr).Port == first.Port {
		t.Fatal("listened twice on one port")
	}
	ln2.Close()
	ln.Close()
	// Free again: the same port.
	ln3, err := listenStable(defaultAddr, again)
	if err != nil {
		t.Fatal(err)
	}
	defer ln3.Close()
	if ln3.Addr().(*net.TCPAddr).Port != first.Port {
		t.Fatalf("port %d, want %d", ln3.Addr().(*net.TCPAddr).Port, first.Port)
	}
	if err := os.WriteFile(filepath.Join(home, client.StableFile), []byte(`{"port":-4}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if st := loadStable(home); st.Port != 0 {
		t.Fatalf("a broken file gave %+v", st)
	}
}
