package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"albedo/client"
)

// A daemon flag comes from the command line, else the environment, else
// config.toml's [daemon] table; a key that is no flag and a value its
// flag refuses are usage errors naming where they came from.
func TestDaemonFlagsFromEnvironmentAndConfig(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(home, client.ConfigFile), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("[daemon]\nnats = \"nats://from-file:4222\"\nnode = \"from-file\"\nlease = \"7s\"\nhost = [\"a.example\", \"b.example\"]\ninsecure-no-tls = true\nmax_attachment_bytes = 1048576\n")
	env := map[string]string{"ALBEDO_NODE": "from-env", "ALBEDO_DB": "postgres://from-env/db"}
	cmd := newDaemonCmd(&globals{})
	if err := cmd.Flags().Parse([]string{"--lease", "9s"}); err != nil {
		t.Fatal(err)
	}
	if err := applyDaemonConfig(cmd.Flags(), home, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	got := func(name string) string { return cmd.Flags().Lookup(name).Value.String() }
	for name, want := range map[string]string{
		"lease": "9s", "node": "from-env", "db": "postgres://from-env/db", "nats": "nats://from-file:4222",
		"host": "[a.example,b.example]", "insecure-no-tls": "true", "listen": defaultAddr,
		"max-attachment-bytes": "1048576", // a key may spell dashes as underscores
	} {
		if got(name) != want {
			t.Errorf("--%s = %q, want %q", name, got(name), want)
		}
	}

	for conf, says := range map[string]string{
		"[daemon]\nnoed = \"x\"\n":     `"noed" is not a flag of albedo daemon`,
		"[daemon]\nlease = \"soon\"\n": "[daemon] lease",
		"[daemon]\nlease = {a = 1}\n":  "[daemon] lease",
	} {
		write(conf)
		err := applyDaemonConfig(newDaemonCmd(&globals{}).Flags(), home, func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), says) || exitCode(err) != exitUsage {
			t.Errorf("%q: %v (exit %d), want a usage error naming %q", conf, err, exitCode(err), says)
		}
	}
	write("")
	err := applyDaemonConfig(newDaemonCmd(&globals{}).Flags(), home, func(k string) string {
		return map[string]string{"ALBEDO_HEARTBEAT": "often"}[k]
	})
	if err == nil || !strings.Contains(err.Error(), "ALBEDO_HEARTBEAT") {
		t.Errorf("a bad value in the environment: %v", err)
	}
}

// --db-file reads the store's URL from a file, and refuses --db beside
// it; the NATS flags take one way of authenticating and need --nats.
func TestDaemonSecretsFromFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url := filepath.Join(dir, "db-url")
	if err := os.WriteFile(url, []byte("postgres://u:secret@db.internal/albedo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := daemonFlags{dbFile: url}
	f.logFormat, f.listen = "text", defaultAddr
	f.natsFlags = natsFlags{nats: "nats://n1:4222,nats://n2:4222", user: "albedo", passwordFile: pw}
	if err := f.check(); err != nil || f.db != "postgres://u:secret@db.internal/albedo" || len(f.natsOpts) != 1 {
		t.Fatalf("check: %v, db %q, %d NATS options", err, f.db, len(f.natsOpts))
	}
	for _, bad := range []daemonFlags{
		{db: "postgres://x", dbFile: url},
		{natsFlags: natsFlags{nats: "nats://n1", user: "albedo"}},
		{natsFlags: natsFlags{nats: "nats://n1", user: "albedo", passwordFile: pw, tokenFile: pw}},
		{natsFlags: natsFlags{user: "albedo", passwordFile: pw}},
		{natsFlags: natsFlags{nats: "nats://n1", cert: "c.pem"}},
		{dbFile: filepath.Join(dir, "none")},
		{gcFloor: -1},
	} {
		bad.logFormat, bad.listen = "text", defaultAddr
		if err := bad.check(); err == nil || exitCode(err) != exitUsage {
			t.Errorf("%+v: %v, want a usage error", bad, err)
		}
	}
}
