package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// The daemon's listener sets no TCP keepalive on what it accepts (its
// four setsockopt calls an accept are a storm's cost, and the heartbeat
// and idle timeout find a peer that is gone).
func TestListenerSetsNoKeepalive(t *testing.T) {
	t.Parallel()
	ln, err := listenStable(defaultAddr, stable{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	raw, err := a.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var on int
	var gerr error
	if err := raw.Control(func(fd uintptr) {
		on, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE)
	}); err != nil || gerr != nil {
		t.Fatal(err, gerr)
	}
	if on != 0 {
		t.Fatal("SO_KEEPALIVE is on for an accepted connection")
	}
}
