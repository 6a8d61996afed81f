package main

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"albedo/client"
)

// daemonKeyFile, in a home (0600), is the key with which the daemon proves
// itself to a page before the page says hello (api/ws/prove.go): the
// page's links carry it (#k=, client.PageLink), and a process that takes
// the port while the daemon is down does not have it. Kept across boots,
// as the links are.
const daemonKeyFile = client.DaemonKeyFile

// loadDaemonKey reads home's daemon key, making one the first time.
func loadDaemonKey(home string) ([]byte, error) {
	path := filepath.Join(home, daemonKeyFile)
	if b, err := os.ReadFile(path); err == nil {
		if k, err := hex.DecodeString(strings.TrimSpace(string(b))); err == nil && len(k) == 32 {
			return k, nil
		}
	}
	k := randomHex(32)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(k), 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", daemonKeyFile, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	return hex.DecodeString(k)
}
