// Small helpers the groups share (doc.go): what a CLI printed, a home's
// daemon and member, a self-signed certificate, a fork's pages.

package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"albedo/client"
	"albedo/wire"
)

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) > 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("%s should be empty, holds %v (%v)", dir, names, err)
	}
}

// daemonURL is the URL and owner token of the daemon of home.
func daemonURL(t *testing.T, home string) (string, string) {
	t.Helper()
	info, err := client.ReadDaemonFile(home)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", info.Port), info.Token
}

// withDefaultProvider writes a config.toml whose default_provider is
// the profile "local", for tests in which no turn runs: its endpoint is
// never called.
func withDefaultProvider(t *testing.T, home string) {
	t.Helper()
	cfg := "default_provider = \"local\"\n\n[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\n"
	if err := os.WriteFile(filepath.Join(home, client.ConfigFile), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// pageEventsOf is pageEvents through a fixture's client.
func pageEventsOf(t *testing.T, fx *fixture, session string) []string {
	t.Helper()
	var out []string
	if err := fx.c.AllEvents(fx.ctx, session, func(raw json.RawMessage, _ wire.Event) error {
		out = append(out, string(raw))
		return nil
	}); err != nil {
		t.Fatalf("history of %s: %v", session, err)
	}
	return out
}

// closedTurn is the offset of the nth turn event that closes a turn: a
// fork point after which the fork starts with no open turn, whichever
// order the turns' events came in.
func closedTurn(evs []wire.Event, n int) int64 {
	for _, ev := range evs {
		if ev.Type == wire.EventTurn && ev.State != wire.TurnStarted {
			if n--; n == 0 {
				return ev.Offset
			}
		}
	}
	return 0
}

// noDaemon fails unless the home is free: no daemon holds its lock and
// there is no daemon.json.
func noDaemon(t *testing.T, home, when string) {
	t.Helper()
	if pid, held := client.LockHolder(home); held {
		t.Fatalf("%s: daemon pid %d holds the home", when, pid)
	}
	if _, err := os.Stat(filepath.Join(home, client.DaemonFile)); !os.IsNotExist(err) {
		t.Fatalf("%s: daemon.json is there (%v)", when, err)
	}
}

func livePID(t *testing.T, home string) int {
	t.Helper()
	info, err := client.ReadDaemonFile(home)
	if err != nil || !client.ProcessAlive(info.PID) {
		t.Fatalf("no live daemon in daemon.json: %+v %v", info, err)
	}
	return info.PID
}

// homeMember is the name of the home's own member, whom daemon.json's token
// acts as: the author of what the fixture's client sends.
func homeMember(t *testing.T, fx *fixture) string {
	t.Helper()
	ms, err := fx.c.Members(fx.ctx)
	if err != nil || len(ms) == 0 {
		t.Fatalf("members %+v: %v", ms, err)
	}
	return ms[0].Name
}

// rssMiB is a process's resident set, from /proc.
func rssMiB(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// selfSigned writes a certificate for albedo.test and 127.0.0.1, and its
// key, into dir, and returns their paths and a pool that trusts it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	return selfSignedSerial(t, dir, 1)
}

// waitInputs reads a session's user messages from the daemon until there
// are n, within a deadline.
func waitInputs(t *testing.T, c *client.Client, id string, n int) []string {
	t.Helper()
	ctx := ctxT(t)
	for {
		var inputs []string
		for _, ev := range events(t, ctx, c, id) {
			if ev.Type == wire.EventMessage && ev.Role == wire.RoleUser {
				inputs = append(inputs, ev.Text)
			}
		}
		if len(inputs) >= n {
			return inputs
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the daemon has %d inputs, not %d", len(inputs), n)
		case <-time.After(50 * time.Millisecond): // the History API has no wait
		}
	}
}

// selfSignedSerial is selfSigned with the certificate's serial number.
func selfSignedSerial(t *testing.T, dir string, serial int64) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "albedo.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"albedo.test"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(leaf)
	return certFile, keyFile, pool
}

// waitTool waits until session may call tool (its bot has connected).
func waitTool(t *testing.T, ctx context.Context, c *client.Client, session, tool string) {
	t.Helper()
	for {
		ts, err := c.Tools(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ts.Tools {
			if x.Name == tool {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s is not offered in %s: %+v", tool, session, ts)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// writer adds member name and grants them write access to session: it
// returns their token and the link to the page that `members add`
// prints.
func writer(t *testing.T, home, name, session string) (token, link string) {
	t.Helper()
	for _, l := range strings.Split(cli(t, home, "members", "add", name), "\n") {
		switch l = strings.TrimSpace(l); {
		case strings.HasPrefix(l, "almem_"):
			token = l
		case strings.Contains(l, "/#token="):
			link = l
		}
	}
	if token == "" || link == "" {
		t.Fatalf("members add %s printed no token or no link", name)
	}
	cli(t, home, "sessions", "grant", session, name, "write")
	return token, link
}

// turnKinds are the types of a session's events, in order, and its last
// tool result, reply and closing event.
func turnKinds(evs []wire.Event) (kinds string, result, reply, end wire.Event) {
	var types []string
	for _, ev := range evs {
		types = append(types, string(ev.Type))
		switch ev.Type {
		case wire.EventToolResult:
			result = ev
		case wire.EventMessage:
			reply = ev
		case wire.EventTurn:
			end = ev
		}
	}
	return strings.Join(types, " "), result, reply, end
}

// screenshot is a PNG of w×h.
func screenshot(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, x%h, color.RGBA{R: 200, G: uint8(x), B: 10, A: 255})
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

// binaryVersion is the version albedo --version prints, which status
// says too ("albedo version 0.1.0-dev (…)").
func binaryVersion(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(albedoBin, "--version").Output()
	f := strings.Fields(string(out))
	if err != nil || len(f) < 3 {
		t.Fatalf("albedo --version: %q %v", out, err)
	}
	return f[2]
}
