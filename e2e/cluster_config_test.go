//go:build !e2e_only || e2e_cluster

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"albedo/client"
)

// Nodes configured as a service manager would: nothing but --home in
// argv, the store's URL and NATS's password read from files that
// config.toml's [daemon] table names, NATS requiring a user, the first
// NATS URL down. A node with the right password hears NATS, and its
// command line holds no secret; one with a wrong password does not start,
// and says why. Another NATS takes a token over TLS, its certificate
// trusted through --nats-ca. A node whose NATS is not up starts all the
// same, and says NATS is failing.
func TestClusterNodesConfiguredWithoutArgv(t *testing.T) {
	parallel(t)
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		Username: "albedo", Password: "nats-secret"})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS did not start")
	}
	t.Cleanup(ns.Shutdown)
	// A second NATS that takes a token, over TLS only.
	certFile, keyFile, _ := selfSigned(t, t.TempDir())
	tlsCfg, err := natsserver.GenTLSConfig(&natsserver.TLSConfigOpts{CertFile: certFile, KeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		Authorization: "nats-token", TLSConfig: tlsCfg, TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	go ts.Start()
	if !ts.ReadyForConnections(10 * time.Second) {
		t.Fatal("the TLS NATS did not start")
	}
	t.Cleanup(ts.Shutdown)
	tlsURL := strings.Replace(ts.ClientURL(), "nats://", "tls://", 1)
	url := clusterDatabase(t, 4)
	ready := map[string]string{}
	for i, password := range []string{"nats-secret", "wrong", "nats-token", "nats-down"} {
		home := t.TempDir()
		write := func(name, content string) string {
			t.Helper()
			path := filepath.Join(home, name)
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			return path
		}
		dbFile, pwFile := write("db-url", url+"\n"), write("nats-password", password+"\n")
		conf := fmt.Sprintf("[daemon]\ndb-file = %q\nnats = %q\nnats-user = \"albedo\"\nnats-password-file = %q\nnode = \"configured-%d\"\n",
			dbFile, "nats://127.0.0.1:1,"+ns.ClientURL(), pwFile, i) // a server that is down first: the client tries the next
		switch password {
		case "nats-token":
			conf = fmt.Sprintf("[daemon]\ndb-file = %q\nnats = %q\nnats-token-file = %q\nnats-ca = %q\nnode = \"configured-%d\"\n",
				dbFile, tlsURL, pwFile, certFile, i)
		case "nats-down": // no NATS at all: the node starts, and says NATS is failing
			conf = fmt.Sprintf("[daemon]\ndb-file = %q\nnats = \"nats://127.0.0.1:1\"\nnode = \"configured-%d\"\n", dbFile, i)
		}
		write(client.ConfigFile, conf)
		if password == "wrong" {
			out, err := exec.CommandContext(ctxT(t), albedoBin, "daemon", "--home", home).CombinedOutput()
			if err == nil || !strings.Contains(string(out), "refused this node's credentials") || strings.Contains(string(out), password) {
				t.Fatalf("a node with a wrong NATS password: %v\n%s", err, out)
			}
			continue
		}
		d := startDaemon(t, home)
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", d.cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		if s := string(cmdline); strings.Contains(s, "postgres") || strings.Contains(s, password) {
			t.Fatalf("a secret in the command line: %q", s)
		}
		if !strings.Contains(d.logText(), "node=configured-"+fmt.Sprint(i)) {
			t.Fatalf("the node's name did not come from config.toml:\n%s", d.logText())
		}
		base, _ := daemonURL(t, home)
		want := "ok"
		if password == "nats-down" {
			want = "failing"
		}
		deadline := time.Now().Add(10 * time.Second)
		for ready[home] != want {
			resp, err := http.Get(base + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			var st struct {
				Ready  bool
				Checks map[string]string
			}
			json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if !st.Ready || st.Checks["store"] != "ok" {
				t.Fatalf("node %d is not ready on its store: %+v", i, st)
			}
			ready[home] = st.Checks["nats"]
			if time.Now().After(deadline) {
				t.Fatalf("node %d's NATS check says %q, want %q", i, ready[home], want)
			}
			time.Sleep(50 * time.Millisecond) // polling under a deadline
		}
	}
}
