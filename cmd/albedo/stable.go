package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"albedo/client"
)

// stable is what a daemon keeps from the one before it on the same home,
// in daemon.stable (0600, beside daemon.json): the port. An open browser
// page holds the address it was opened on, so keeping the port lets it
// reconnect after a restart, a crash included, as every other client
// does; it holds a personal token of its own (albedo open), not
// daemon.json's, which is new on every boot: a token once seen in ps, a
// scrollback or a process that took the port while the daemon was down
// is refused by the next daemon.
type stable struct {
	Port int `json:"port"`
}

// loadStable reads home's daemon.stable, or returns no port when there is
// none or it is unreadable.
func loadStable(home string) stable {
	var st stable
	b, err := os.ReadFile(filepath.Join(home, client.StableFile))
	if err == nil && json.Unmarshal(b, &st) == nil && st.Port >= 0 && st.Port < 1<<16 {
		return st
	}
	return stable{}
}

// saveStable writes st atomically, readable by the user only.
func saveStable(home string, st stable) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp := filepath.Join(home, client.StableFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", client.StableFile, err)
	}
	return os.Rename(tmp, filepath.Join(home, client.StableFile))
}

// listenStable listens on the port of the daemon before, when addr is the
// default (any loopback port) and that port is free; on addr otherwise.
func listenStable(addr string, st stable) (net.Listener, error) {
	if addr == defaultAddr && st.Port != 0 {
		if ln, err := listen(fmt.Sprintf("127.0.0.1:%d", st.Port)); err == nil {
			return ln, nil
		}
		// Taken since: any free port will do (open pages then cannot
		// follow, and say they are reconnecting until reopened).
	}
	return listen(addr)
}

// listen is net.Listen with no TCP keepalive on the connections it
// accepts. A websocket finds a peer that is gone by its heartbeat, and a
// keep-alive HTTP connection ends after its idle timeout; keepalive's
// options cost four setsockopt calls on every accept, which a storm of
// reconnects makes by the thousand.
func listen(addr string) (net.Listener, error) {
	lc := net.ListenConfig{KeepAlive: -1}
	return lc.Listen(context.Background(), "tcp", addr)
}
