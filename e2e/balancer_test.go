package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"albedo/client"
)

// What an operator runs, run here: Debian's nats-server and haproxy (as
// .ci/run installs them), haproxy with deploy/haproxy.cfg as it is, three
// nodes behind it, clients through it.

// freePort is a TCP port on 127.0.0.1 that nothing listens on now: for
// the programs that take no port 0 (haproxy's bind, nats-server's).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// program finds an operator's program, or fails saying .ci/run installs
// it.
func program(t *testing.T, name, pkg string) string {
	t.Helper()
	for _, dir := range []string{"", "/usr/sbin/", "/usr/bin/"} {
		if p, err := exec.LookPath(dir + name); err == nil {
			return p
		}
	}
	t.Fatalf("%s is required for this test: apt-get install %s (.ci/run installs it)", name, pkg)
	return ""
}

// natsProc is a nats-server process of the test's.
type natsProc struct {
	url  string
	port int
	cmd  *exec.Cmd
}

// startNATSServer runs Debian's nats-server on port (0: a free one) until
// the test ends, and returns once it takes clients.
func startNATSServer(t *testing.T, port int) *natsProc {
	t.Helper()
	skipShort(t, "nats-server")
	if port == 0 {
		port = freePort(t)
	}
	cmd := exec.Command(program(t, "nats-server", "nats-server"), "-a", "127.0.0.1", "-p", fmt.Sprint(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n := &natsProc{url: fmt.Sprintf("nats://127.0.0.1:%d", port), port: port, cmd: cmd}
	t.Cleanup(n.stop)
	waitTCP(t, fmt.Sprintf("127.0.0.1:%d", port), "nats-server")
	return n
}

// stop ends the server and waits for it.
func (n *natsProc) stop() {
	if n.cmd.Process != nil && n.cmd.ProcessState == nil {
		n.cmd.Process.Signal(syscall.SIGTERM)
		n.cmd.Wait()
	}
}

// waitTCP waits until addr accepts a connection.
func waitTCP(t *testing.T, addr, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not take connections at %s: %v", what, addr, err)
		}
		time.Sleep(20 * time.Millisecond) // polling under a deadline
	}
}

// startHAProxy runs haproxy with deploy/haproxy.cfg in front of nodes and
// returns its URL and its stats socket, once it holds every node up.
func startHAProxy(t *testing.T, nodes []*node) (url, stats string) {
	t.Helper()
	if len(nodes) != 3 {
		t.Fatalf("deploy/haproxy.cfg names three nodes, not %d", len(nodes))
	}
	port := freePort(t)
	stats = filepath.Join(t.TempDir(), "haproxy.sock")
	env := append(os.Environ(), fmt.Sprintf("ALBEDO_BIND=127.0.0.1:%d", port))
	for i, nd := range nodes {
		base, _ := daemonURL(t, nd.home)
		env = append(env, fmt.Sprintf("ALBEDO_NODE%d=%s", i+1, strings.TrimPrefix(base, "http://")))
	}
	cfg, err := filepath.Abs("../deploy/haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	// A stats socket beside the file, to see what haproxy holds up.
	cmd := exec.Command(program(t, "haproxy", "haproxy"), "-db", "-f", cfg, "-f", writeTemp(t, "global\n    stats socket "+stats+" level admin\n"))
	cmd.Env = env
	out := &logLines{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("haproxy:\n%s", out)
		}
	})
	waitTCP(t, fmt.Sprintf("127.0.0.1:%d", port), "haproxy")
	waitUp(t, stats, 3)
	return fmt.Sprintf("http://127.0.0.1:%d", port), stats
}

// writeTemp writes s to a file of the test's and returns its path.
func writeTemp(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "extra.cfg")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// upServers counts the servers haproxy holds up, from its stats socket.
func upServers(t *testing.T, stats string) int {
	t.Helper()
	c, err := net.Dial("unix", stats)
	if err != nil {
		return 0
	}
	defer c.Close()
	fmt.Fprintln(c, "show stat")
	n := 0
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		f := strings.Split(sc.Text(), ",")
		if len(f) > 17 && f[0] == "nodes" && strings.HasPrefix(f[1], "node") && f[17] == "UP" {
			n++
		}
	}
	return n
}

// waitUp waits until haproxy holds want servers up.
func waitUp(t *testing.T, stats string, want int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for upServers(t, stats) != want {
		if time.Now().After(deadline) {
			t.Fatalf("haproxy holds %d servers up, not %d", upServers(t, stats), want)
		}
		time.Sleep(50 * time.Millisecond) // polling under a deadline
	}
}

// readyzCode is the /readyz status of the daemon running on nd's home.
func readyzCode(t *testing.T, nd *node) int {
	info, err := client.ReadDaemonFile(nd.home)
	if err != nil {
		return 0
	}
	resp, err := http.Get(info.URL + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
