//go:build !e2e_only || e2e_core

package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"albedo/client"
	"albedo/wire"
)

// A renewed certificate is served to new connections after SIGHUP, with
// no restart; a pair that cannot be read is refused and the one served
// stays.
func TestTLSCertificateReloadsOnSIGHUP(t *testing.T) {
	parallel(t)
	home, dir := t.TempDir(), t.TempDir()
	cert, key, _ := selfSignedSerial(t, dir, 1)
	d := startDaemon(t, home, "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key)
	info, err := client.ReadDaemonFile(home)
	if err != nil {
		t.Fatal(err)
	}
	served := func() int64 {
		t.Helper()
		conn, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(info.Port), &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	// hup signals the daemon and waits for the n-th log line that has want.
	hup := func(want string, n int) {
		t.Helper()
		if err := syscall.Kill(info.PID, syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for strings.Count(d.logText(), want) < n {
			if time.Now().After(deadline) {
				t.Fatalf("no %q after SIGHUP: %s", want, d.logText())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if got := served(); got != 1 {
		t.Fatalf("serial %d at start, want 1", got)
	}
	// The CLI trusts it by daemon.json's tls_cert_sha256: no root signed it.
	cli(t, home, "sessions")
	selfSignedSerial(t, dir, 2) // renewed in place
	hup("TLS certificate re-read", 1)
	if got := served(); got != 2 {
		t.Fatalf("serial %d after SIGHUP, want the renewed 2", got)
	}
	cli(t, home, "sessions") // daemon.json names the renewed one now
	if err := os.WriteFile(cert, []byte("half a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	hup("still serving the one before", 1)
	if got := served(); got != 2 {
		t.Fatalf("serial %d after a broken renewal, want 2 still", got)
	}
}

// A daemon on loopback answers to --host and its certificate's names
// too, as one beyond loopback does: a proxy on the machine forwards a
// public name to it. Other names stay refused.
func TestLoopbackDaemonAnswersToItsNames(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	cert, key, pool := selfSigned(t, t.TempDir())
	startDaemon(t, home, "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--host", "albedo.example")
	info, err := client.ReadDaemonFile(home)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
	t.Cleanup(hc.CloseIdleConnections)
	for host, want := range map[string]int{"albedo.example": 200, "albedo.test:" + strconv.Itoa(info.Port): 200, "localhost": 200, "evil.example": 403} {
		req, _ := http.NewRequest("GET", "https://127.0.0.1:"+strconv.Itoa(info.Port)+"/v1/sessions", nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+info.Token)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// The edge's flags refuse what would be unsafe or meaningless, as usage
// errors (exit 2) that say what to do, before the daemon takes its home.
func TestEdgeFlagsRefused(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	cert, key, _ := selfSigned(t, t.TempDir())
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, "beyond loopback: serve TLS with --tls-cert and --tls-key, or say --insecure-no-tls"},
		{[]string{"--addr", "[::]:0"}, "beyond loopback"},
		{[]string{"--listen", "0.0.0.0:0", "--tls-cert", cert}, "--tls-cert and --tls-key go together"},
		{[]string{"--listen", "0.0.0.0:0", "--tls-cert", cert, "--tls-key", key, "--insecure-no-tls"}, "contradict"},
		{[]string{"--listen", "nowhere"}, `--listen "nowhere": want HOST:PORT`},
		{[]string{"--log-format", "xml"}, `--log-format "xml": text or json`},
		{[]string{"--host", "evil example"}, `--host "evil example"`},
		{[]string{"--metrics-addr", "9090"}, `--metrics-addr "9090": want HOST:PORT`},
	}
	for _, tc := range cases {
		_, stderr, code := cliRun(t, home, "", append([]string{"daemon"}, tc.args...)...)
		wantExit(t, strings.Join(tc.args, " "), stderr, code, 2, tc.want)
	}
	if _, err := os.Stat(filepath.Join(home, client.DownFile)); !os.IsNotExist(err) {
		t.Fatalf("a refused flag left daemon.down: %v", err)
	}
	// A key that is not the certificate's fails the start, saying so.
	_, otherKey, _ := selfSigned(t, t.TempDir())
	_, stderr, code := cliRun(t, home, "", "daemon", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", otherKey)
	wantExit(t, "a key of another certificate", stderr, code, 1, "private key does not match public key")
}

// A team server's edge, on real processes: an owner token made by the
// command before the daemon starts and one made while it runs, served over
// TLS beyond loopback, the Host check strict, /readyz and /metrics on the
// metrics listener, JSON logs; removing a token closes its websocket with
// 4401.
func TestTeamServerEdge(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	cert, key, pool := selfSigned(t, t.TempDir())
	// While the daemon runs, the command asks it over TLS (it holds the
	// home's SQLite file), trusting the self-signed certificate, which no
	// root signed, because daemon.json names it.
	tokensCmd := func(args ...string) (string, string, int) {
		t.Helper()
		return cliRun(t, home, "", append([]string{"tokens"}, args...)...)
	}
	addOwner := func(name string) string {
		t.Helper()
		out, stderr, code := tokensCmd("add", "--role", "owner", name)
		if code != 0 || !strings.Contains(stderr, "not shown again") {
			t.Fatalf("tokens add %s: exit %d, %s", name, code, stderr)
		}
		return strings.TrimSpace(out)
	}
	alice := addOwner("alice")
	if !strings.HasPrefix(alice, "alown_") {
		t.Fatalf("tokens add printed %q", alice)
	}
	d := startDaemon(t, home, "--listen", "0.0.0.0:0", "--tls-cert", cert, "--tls-key", key,
		"--metrics-addr", "127.0.0.1:0", "--log-format", "json", "--host", "albedo.example")
	info, err := client.ReadDaemonFile(home)
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(info.Port)
	var metricsAddr string
	for line := range strings.SplitSeq(strings.TrimSpace(d.logText()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("--log-format json wrote a line that is not JSON: %q", line)
		}
		if rec["msg"] == "metrics listening" {
			metricsAddr, _ = rec["addr"].(string)
		}
	}
	if metricsAddr == "" {
		t.Fatalf("no metrics address in the log:\n%s", d.logText())
	}

	tlsCfg := &tls.Config{RootCAs: pool}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}, Timeout: 10 * time.Second}
	t.Cleanup(hc.CloseIdleConnections)
	get := func(url, host, token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		if host != "" {
			req.Host = host
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	base := "https://127.0.0.1:" + port
	if code, body := get(base+"/readyz", "", ""); code != 200 || !strings.Contains(body, `"store":"ok"`) {
		t.Fatalf("/readyz over TLS: %d %s", code, body)
	}
	if code, _ := get(base+"/v1/sessions", "albedo.example:"+port, alice); code != 200 {
		t.Fatalf("alice, Host albedo.example (--host): %d", code)
	}
	if code, _ := get(base+"/v1/sessions", "albedo.test", alice); code != 200 {
		t.Fatalf("alice, Host albedo.test (the certificate's): %d", code)
	}
	if code, body := get(base+"/v1/sessions", "rebound.evil.example", alice); code != 403 || !strings.Contains(body, "forbidden") {
		t.Fatalf("Host of another name: %d %s", code, body)
	}
	if code, _ := get(base+"/metrics", "", alice); code != 404 {
		t.Fatalf("/metrics on the API's address: %d, want 404 (it is on --metrics-addr)", code)
	}
	// Plain HTTP on the TLS port is refused by the TLS server.
	if code, body := get("http://127.0.0.1:"+port+"/healthz", "", ""); code != 400 || !strings.Contains(body, "HTTPS") {
		t.Fatalf("plain HTTP to the TLS port: %d %s", code, body)
	}

	// A second owner token, made while the daemon runs: through the daemon,
	// so it is accepted at once.
	bob := addOwner("bob")
	if code, _ := get(base+"/v1/sessions", "", bob); code != 200 {
		t.Fatalf("bob's token, made while the daemon runs: %d; log:\n%s", code, d.logText())
	}
	if out, _, _ := tokensCmd("list"); !strings.Contains(out, "owner  alice") || !strings.Contains(out, "owner  bob") || strings.Contains(out, "alown_") {
		t.Fatalf("tokens list:\n%s", out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "wss://127.0.0.1:"+port+"/v1/ws", &websocket.DialOptions{
		Subprotocols: []string{wire.Subprotocol}, HTTPClient: &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}},
		HTTPHeader: http.Header{"Authorization": {"Bearer " + bob}}})
	if err != nil {
		t.Fatalf("wss as bob: %v", err)
	}
	defer ws.CloseNow()
	hello, _ := json.Marshal(wire.Command{ID: 1, Op: wire.OpHello, Client: "edge-test"})
	if err := ws.Write(ctx, websocket.MessageText, hello); err != nil {
		t.Fatal(err)
	}
	var r wire.Reply
	for r.ID != 1 {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("hello: %v", err)
		}
		_ = json.Unmarshal([]byte(strings.SplitN(string(b), "\n", 2)[0]), &r)
	}
	if !r.OK || r.Role != wire.TokenOwner {
		t.Fatalf("bob's hello: %+v", r)
	}

	mhc := &http.Client{Timeout: 10 * time.Second}
	resp, err := mhc.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`albedo_connections{role="owner"} 1`, "albedo_writer_commit_seconds_bucket", "albedo_writer_batch_size_count", "albedo_deliveries_total", "albedo_turn_seconds_count", "go_goroutines"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, b)
		}
	}
	resp, err = mhc.Get("http://" + metricsAddr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/readyz on the metrics listener: %d", resp.StatusCode)
	}

	// Removing bob closes his websocket with 4401; alice is untouched.
	if out, _, _ := tokensCmd("remove", "bob"); !strings.Contains(out, `owner token "bob" removed`) {
		t.Fatalf("tokens remove: %s", out)
	}
	for {
		_, _, err := ws.Read(ctx)
		if err == nil {
			continue
		}
		if websocket.CloseStatus(err) != 4401 {
			t.Fatalf("bob's socket ended with %v, want close 4401", err)
		}
		break
	}
	if code, _ := get(base+"/v1/sessions", "", bob); code != 401 {
		t.Fatalf("bob after remove: %d", code)
	}
	if code, _ := get(base+"/v1/sessions", "", alice); code != 200 {
		t.Fatalf("alice after bob's remove: %d", code)
	}
	_, stderr, code := tokensCmd("remove", "bob")
	wantExit(t, "remove a removed token", stderr, code, 4, `no owner token named "bob"`)
	d.stop()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("timed out")
	}
}

// The tokens command refuses bad input as usage errors and names the
// commands for other roles, on the store and through a daemon.
func TestTokensCommandRefusals(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"tokens", "add", "alice"}, "--role is required"},
		{[]string{"tokens", "add", "--role", "bot", "b"}, "albedo bots add"},
		{[]string{"tokens", "add", "--role", "viewer", "v"}, "albedo share"},
		{[]string{"tokens", "add", "--role", "root", "r"}, "only owner tokens"},
		{[]string{"tokens", "add", "--role", "owner", "Not A Name"}, "1-64 of a-z 0-9 . _ -"},
		{[]string{"tokens", "add", "--role", "owner", strings.Repeat("a", 65)}, "1-64 of a-z 0-9 . _ -"},
		{[]string{"tokens", "add", "--role", "owner", "--db", "/tmp/x.db", "a"}, "--db and database_url take a postgres:// URL"},
	}
	for _, tc := range cases {
		_, stderr, code := cliRun(t, home, "", tc.args...)
		want := 2
		if strings.Contains(tc.want, "postgres") {
			want = 1
		}
		wantExit(t, strings.Join(tc.args, " "), stderr, code, want, tc.want)
	}
	if out := cli(t, home, "tokens", "list"); !strings.Contains(out, "no tokens yet") {
		t.Fatalf("tokens list after refusals: %s", out)
	}

	// Through a daemon that holds the home's SQLite file: the same words
	// and exit statuses, a taken name, a missing one; and albedo migrate,
	// which cannot open the file, says why at once.
	startDaemon(t, home)
	for _, tc := range cases[4:6] {
		_, stderr, code := cliRun(t, home, "", tc.args...)
		wantExit(t, "through the daemon: "+strings.Join(tc.args, " "), stderr, code, 2, tc.want)
	}
	cli(t, home, "tokens", "add", "--role", "owner", "ops")
	_, stderr, code := cliRun(t, home, "", "tokens", "add", "--role", "owner", "ops")
	wantExit(t, "a taken name through the daemon", stderr, code, 1, `an owner token named "ops" exists`)
	_, stderr, code = cliRun(t, home, "", "tokens", "remove", "nope")
	wantExit(t, "a missing name through the daemon", stderr, code, 4, `no owner token named "nope"`)
	_, stderr, code = cliRun(t, home, "", "migrate")
	wantExit(t, "migrate beside the daemon", stderr, code, 1, "holds its SQLite file")
}
