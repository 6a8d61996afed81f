package main

import (
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"albedo/client"
)

// daemonKeyFile, in a home (0600), is the key with which the daemon proves
// itself to a page before the page says hello (api/ws/prove.go): the
// page's links carry it (#k=), and a process that takes the port while the
// daemon is down does not have it. Kept across boots, as the links are.
const daemonKeyFile = "daemon.key"

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

// linkKey is the daemon key as a link carries it, or "" when home has
// none (a command that goes to a URL: TLS proves that server).
func linkKey(home string) string {
	if home == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(home, daemonKeyFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// keyedLink is a page link the daemon made (a member's invite) with this
// home's key in its fragment (#k=), as albedo open's and share's links
// carry it, so that the page it opens talks only to this daemon: the
// daemon never hands its key out, the home's files hold it. A daemon
// reached by --url, or a link that is no page link, is left as it is.
func keyedLink(link string, c *client.Client) string {
	k := linkKey(c.Home())
	base, frag, ok := strings.Cut(link, "#")
	if k == "" || c.URL() != "" || !ok {
		return link
	}
	if v, err := url.ParseQuery(frag); err != nil || v.Get("k") != "" {
		return link
	}
	return base + "#" + frag + "&" + url.Values{"k": {k}}.Encode()
}
