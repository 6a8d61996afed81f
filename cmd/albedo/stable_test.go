package main

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"albedo/client"
)

// A daemon keeps the token and port of the one before it; a broken file
// gives a new token; a port taken since gives another port.
func TestStableTokenAndPort(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	first := loadStable(home)
	if !validToken(first.Token) || first.Port != 0 {
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
	// Still taken: another port, the same token.
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
	if err := os.WriteFile(filepath.Join(home, client.StableFile), []byte(`{"token":"short"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if st := loadStable(home); st.Token == first.Token || !validToken(st.Token) {
		t.Fatalf("a broken file gave %+v", st)
	}
}
