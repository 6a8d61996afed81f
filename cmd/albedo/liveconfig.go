package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"albedo/client"
	"albedo/hub/mcphost"
	"albedo/hub/provider"
)

// configPoll is how often a running daemon reads config.toml for edits.
// An edit is applied once two reads in a row find the same text, so that
// a file caught half-written is not taken for a broken one. Reading a
// file this small is cheap, and sees an editor that saves by renaming a
// new file over the old as well as one that writes it in place.
const configPoll = 500 * time.Millisecond

// liveConfig applies edits of config.toml to a running daemon: its
// profiles and default_provider take effect for the next turn; an edit
// that does not parse or is refused leaves the ones before and is logged
// once; settings only a start reads are logged as needing a restart.
// Owned by the goroutine watchConfig starts.
type liveConfig struct {
	path string
	reg  *provider.Registry
	mcp  *mcphost.Host
	log  *slog.Logger

	good provider.Config // the config the daemon runs on: read at start, then the last edit applied
	text []byte          // config.toml's text when last applied or refused
	seen []byte          // config.toml's text at the last read
}

// watchConfig reads config.toml every configPoll and applies its edits
// until the func it returns is called; that func waits for the goroutine.
// text is the file as it was before the start read it into reg and cfg:
// an edit in between is applied like any other.
func (d *daemon) watchConfig(reg *provider.Registry, mcp *mcphost.Host, cfg provider.Config, text []byte) func() {
	lc := &liveConfig{path: filepath.Join(d.home, client.ConfigFile), reg: reg, mcp: mcp, log: d.log, good: cfg, text: text, seen: text}
	return every(configPoll, lc.poll)
}

// readConfigText is config.toml's text; a missing file reads as empty,
// as LoadConfig takes it for the empty config.
func readConfigText(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

// poll reads the file and applies it when it changed and has settled.
func (lc *liveConfig) poll() {
	b := readConfigText(lc.path)
	settled := bytes.Equal(b, lc.seen)
	lc.seen = b
	if !settled || bytes.Equal(b, lc.text) {
		return
	}
	lc.text = b
	lc.apply()
}

// apply reads config.toml into the registry, or keeps the profiles before
// when it cannot, and says what changed.
func (lc *liveConfig) apply() {
	cfg, err := loadConfig(filepath.Dir(lc.path))
	if err == nil {
		// The servers first: a profile may name only servers that exist,
		// and the registry checks it; a refused [mcp] table leaves both.
		if err = lc.reloadMCP(cfg.MCP); err == nil {
			err = lc.reg.Reload(cfg, os.Getenv)
			if err != nil {
				lc.reloadMCP(lc.good.MCP) // the servers before, as the providers
			}
		}
		if err != nil {
			err = fmt.Errorf("%s: %w", client.ConfigFile, err) // as the start says it (loadProviders)
		}
	}
	if err != nil {
		lc.log.Error("config.toml not applied; the providers before it stay", "err", err)
		return
	}
	if !reflect.DeepEqual(lc.good.MCP, cfg.MCP) {
		lc.log.Info("config.toml applied: MCP servers changed", "servers", strings.Join(slices.Sorted(maps.Keys(cfg.MCP)), ","))
	}
	added, changed, removed := profileChanges(lc.good.Providers, cfg.Providers)
	if len(added)+len(changed)+len(removed) > 0 || lc.good.DefaultProvider != cfg.DefaultProvider {
		lc.log.Info("config.toml applied: providers changed for the next turns",
			"added", strings.Join(added, ","), "changed", strings.Join(changed, ","), "removed", strings.Join(removed, ","),
			"default_provider", lc.reg.Default())
	}
	if keys := needsRestart(lc.good, cfg); len(keys) > 0 {
		lc.log.Warn("config.toml changed settings read only at start: the daemon needs a restart to apply them", "settings", strings.Join(keys, ","))
	}
	lc.good = cfg
}

// reloadMCP gives the MCP host its servers (none to give without one).
func (lc *liveConfig) reloadMCP(cfg map[string]mcphost.ServerConfig) error {
	if lc.mcp == nil {
		return nil
	}
	return lc.mcp.Reload(cfg)
}

// profileChanges compares two sets of profiles by name.
func profileChanges(before, after map[string]provider.Profile) (added, changed, removed []string) {
	for n, p := range after {
		old, ok := before[n]
		switch {
		case !ok:
			added = append(added, n)
		case !reflect.DeepEqual(old, p):
			changed = append(changed, n)
		}
	}
	for n := range before {
		if _, ok := after[n]; !ok {
			removed = append(removed, n)
		}
	}
	sort.Strings(added)
	sort.Strings(changed)
	sort.Strings(removed)
	return added, changed, removed
}

// needsRestart names the settings of config.toml that changed from before
// to after and that only a start reads: the store (database_url), the
// owner's name, and the [daemon] table's flags, by key ("daemon.listen").
func needsRestart(before, after provider.Config) []string {
	var keys []string
	if before.DatabaseURL != after.DatabaseURL {
		keys = append(keys, "database_url")
	}
	if before.Name != after.Name {
		keys = append(keys, "name")
	}
	flags := maps.Clone(before.Daemon)
	if flags == nil {
		flags = map[string]any{}
	}
	maps.Copy(flags, after.Daemon)
	for _, k := range slices.Sorted(maps.Keys(flags)) {
		if !reflect.DeepEqual(before.Daemon[k], after.Daemon[k]) {
			keys = append(keys, "daemon."+k)
		}
	}
	return keys
}
