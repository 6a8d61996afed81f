package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/spf13/pflag"

	"albedo/client"
)

// Every flag of `albedo daemon` can come from three places, so that no
// secret needs to be in argv (where ps shows it) and a service manager
// can configure a node without a command line: the flag itself; else the
// environment, ALBEDO_ and the flag's name in capitals with - as _
// (ALBEDO_DB, ALBEDO_NATS, ALBEDO_METRICS_ADDR); else config.toml's
// [daemon] table, the flag's name as its key (db = "postgres://…",
// host = ["a.example", "b.example"]). Secrets can be read from files:
// --db-file, --nats-password-file, --nats-token-file, --nats-creds,
// --nats-nkey.

// daemonEnv is the environment variable of a daemon flag.
func daemonEnv(flag string) string {
	return "ALBEDO_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// applyDaemonConfig sets each flag of fs not given on the command line
// from the environment (getenv), else from the [daemon] table of the
// home's config.toml. A key of the table that names no flag, or a value a
// flag refuses, is a usage error naming where it came from. A config.toml
// that does not parse is left for the daemon's start to report.
func applyDaemonConfig(fs *pflag.FlagSet, home string, getenv func(string) string) error {
	table, err := daemonTable(filepath.Join(home, client.ConfigFile))
	if err != nil {
		return err
	}
	// A key may spell a flag's dashes as underscores (max_attachment_bytes),
	// as the settings are named in the docs.
	for key, v := range table {
		if k := strings.ReplaceAll(key, "_", "-"); k != key {
			delete(table, key)
			table[k] = v
		}
	}
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	for key := range table {
		if !slices.Contains(names, key) {
			return usageErrorf("%s [daemon]: %q is not a flag of albedo daemon (the keys are its flags: %s)", client.ConfigFile, key, strings.Join(names, ", "))
		}
	}
	var errs []error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			return
		}
		if v := getenv(daemonEnv(f.Name)); v != "" {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, usageErrorf("%s: %v", daemonEnv(f.Name), err))
			}
			return
		}
		if raw, ok := table[f.Name]; ok {
			v, err := tomlFlagValue(raw)
			if err == nil {
				err = fs.Set(f.Name, v)
			}
			if err != nil {
				errs = append(errs, usageErrorf("%s [daemon] %s: %v", client.ConfigFile, f.Name, err))
			}
		}
	})
	return errors.Join(errs...)
}

// daemonTable reads the [daemon] table of config.toml, if any.
func daemonTable(path string) (map[string]any, error) {
	var c struct {
		Daemon map[string]any `toml:"daemon"`
	}
	if _, err := toml.DecodeFile(path, &c); err != nil {
		return nil, nil // missing, or broken: the start says so (loadProviders)
	}
	return c.Daemon, nil
}

// tomlFlagValue is a TOML value as a flag's text: strings as they are,
// numbers and booleans as written, arrays (of a repeatable flag) joined
// by commas.
func tomlFlagValue(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			s, err := tomlFlagValue(e)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	}
	return "", fmt.Errorf("a %T, not a string, number, boolean or array", v)
}

// readSecret reads a secret from the file path names: its content with
// surrounding space trimmed, which must not be empty.
func readSecret(flag, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--%s: %w", flag, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("--%s: %s is empty", flag, path)
	}
	return s, nil
}

// check checks the flags (the edge's, NATS's) and reads what files they
// name: --db-file's URL, NATS's secrets.
func (f *daemonFlags) check() error {
	if err := f.edgeFlags.check(); err != nil {
		return err
	}
	if f.dbFile != "" {
		if f.db != "" {
			return usageErrorf("--db and --db-file both name the store: give one")
		}
		u, err := readSecret("db-file", f.dbFile)
		if err != nil {
			return usageErrorf("%v", err)
		}
		f.db = u
	}
	if f.gcFloor < 0 {
		return usageErrorf("--gc-floor-bytes is %d: give 0 (no floor) or more", f.gcFloor)
	}
	opts, err := f.natsFlags.options()
	if err != nil {
		return err
	}
	f.natsOpts = opts
	return nil
}
