package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"albedo/client"
	"albedo/wire"
)

// pageTokensFile, in a home (0600), keeps the personal tokens albedo open
// made for the pages it opened, one per browser, by label: daemon.json's
// token changes on every boot, and a page that reconnects after a restart
// needs one that does not. Each is a member token, revoked like any other
// (albedo members rm, or a new one of the same label).
const pageTokensFile = "page.tokens"

// pageToken returns the token albedo open puts in the page's link for a
// home's daemon: the one kept for this browser when the daemon still
// accepts it, else a new one, kept.
func pageToken(ctx context.Context, c *client.Client) (string, error) {
	path := filepath.Join(c.Home(), pageTokensFile)
	kept := map[string]string{}
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &kept) // unreadable: make new ones
	}
	label := "page-" + browserLabel()
	if tok := kept[label]; tok != "" && tokenWorks(ctx, c, tok) {
		return tok, nil
	}
	tok, err := c.MyToken(ctx, label)
	if err != nil {
		return "", err
	}
	kept[label] = tok
	b, _ := json.Marshal(kept)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return "", fmt.Errorf("keep the page's token: %w", err)
	}
	return tok, os.Rename(tmp, path)
}

// tokenWorks says whether the daemon of c's home accepts tok.
func tokenWorks(ctx context.Context, c *client.Client, tok string) bool {
	other, err := client.New(client.Options{Home: c.Home(), Token: tok, Name: "albedo-open/1"})
	if err != nil {
		return false
	}
	_, err = other.SessionsPage(ctx, "", 1)
	return client.Code(err) != wire.CodeUnauthorized && err == nil
}

// browserLabel names the browser albedo open starts: $BROWSER's command,
// else "default".
func browserLabel() string {
	b := os.Getenv("BROWSER")
	if b == "" {
		return "default"
	}
	if i := strings.IndexAny(b, ": "); i > 0 {
		b = b[:i]
	}
	return strings.Trim(fitName(filepath.Base(b)), "._-")
}
