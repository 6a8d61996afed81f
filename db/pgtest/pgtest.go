package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// Server is one running PostgreSQL.
type Server struct {
	dir  string // data directory and socket directory live under it
	bin  string
	port int
	asPG bool // run its commands as the postgres user
	dbs  atomic.Int64
}

var (
	sharedMu  sync.Mutex
	shared    *Server
	sharedErr error
)

// Shared returns the package's server, starting it on first use. Call
// StopShared from TestMain after m.Run.
func Shared(t testing.TB) *Server {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil && sharedErr == nil {
		shared, sharedErr = Start()
	}
	if sharedErr != nil {
		t.Fatalf("PostgreSQL for tests: %v", sharedErr)
	}
	return shared
}

// StopShared stops the package's server, if one was started.
func StopShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		shared.Stop()
		shared = nil
	}
}

// ThenStop wraps a package's testing.M so that its Run stops the
// package's server (StopShared) once the tests are done, before whoever
// called Run looks further: goleak.VerifyTestMain(pgtest.ThenStop(m))
// then finds none of the server's goroutines left behind.
func ThenStop(m *testing.M) interface{ Run() int } { return thenStop{m} }

type thenStop struct{ m *testing.M }

func (t thenStop) Run() int {
	code := t.m.Run()
	StopShared()
	return code
}

// Start initialises and starts a server in a new temporary directory.
// Servers left by test processes that died without stopping them (a
// panic, a test binary's timeout: pg_ctl's server is not their child) are
// stopped first.
func Start() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	stopOrphans(bin)
	dir, err := os.MkdirTemp("", "albedo-pg-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{dir: dir, bin: bin, asPG: os.Geteuid() == 0}
	if s.asPG {
		if err := chownToPostgres(dir); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if out, err := s.run("initdb", "-D", s.data(), "-A", "trust", "-U", "albedo", "-E", "UTF8", "--no-locale", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	// A free port is taken between looking and listening now and then:
	// try a few.
	for attempt := 0; attempt < 5; attempt++ {
		if s.port, err = freePort(); err != nil {
			break
		}
		var out string
		if out, err = s.run("pg_ctl", "-D", s.data(), "-o", s.opts(), "-l", filepath.Join(s.dir, "log"), "-w", "-t", "60", "start"); err == nil {
			return s, nil
		}
		err = fmt.Errorf("pg_ctl start: %v: %s %s", err, out, tail(filepath.Join(s.dir, "log")))
	}
	os.RemoveAll(dir)
	return nil, err
}

// ownerFile names, in a server's directory, the pid of the test process
// that started it.
const ownerFile = "owner.pid"

// stopOrphans stops and removes the servers under the temporary directory
// whose test process is gone.
func stopOrphans(bin string) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "albedo-pg-*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // another version's, or being made: not ours to judge
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			continue // alive (or not ours to signal)
		}
		s := &Server{dir: dir, bin: bin, asPG: os.Geteuid() == 0}
		s.Stop()
	}
}

// URL is the server's connection string for database name.
func (s *Server) URL(name string) string {
	return fmt.Sprintf("postgres://albedo@127.0.0.1:%d/%s?sslmode=disable", s.port, name)
}

// Database creates a new, empty database and returns its URL; it is
// dropped when the test ends.
func (s *Server) Database(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.dbs.Add(1))
	admin, err := sql.Open("pgx", s.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", s.URL("postgres"))
		if err != nil {
			return
		}
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return s.URL(name)
}

// Restart stops the server cleanly (every committed transaction kept)
// and starts it again on the same port, as an operator's restart does:
// clients' connections are cut and refused until it is back.
func (s *Server) Restart() error {
	// -l as at start: without it the new server would write to (and
	// hold open) the pipes run reads, and run would never return.
	if out, err := s.run("pg_ctl", "-D", s.data(), "-l", filepath.Join(s.dir, "log"), "-m", "fast", "-w", "-t", "60", "restart"); err != nil {
		return fmt.Errorf("pg_ctl restart: %v: %s %s", err, out, tail(filepath.Join(s.dir, "log")))
	}
	return nil
}

// Halt stops the server cleanly and leaves it down, as an outage does,
// until Resume: clients' connections are cut and refused meanwhile.
func (s *Server) Halt() error {
	if out, err := s.run("pg_ctl", "-D", s.data(), "-m", "fast", "-w", "-t", "60", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s %s", err, out, tail(filepath.Join(s.dir, "log")))
	}
	return nil
}

// Resume starts a halted server again on the same port.
func (s *Server) Resume() error {
	if out, err := s.run("pg_ctl", "-D", s.data(), "-o", s.opts(), "-l", filepath.Join(s.dir, "log"), "-w", "-t", "60", "start"); err != nil {
		return fmt.Errorf("pg_ctl start: %v: %s %s", err, out, tail(filepath.Join(s.dir, "log")))
	}
	return nil
}

// Stop stops the server at once and removes its files.
func (s *Server) Stop() {
	_, _ = s.run("pg_ctl", "-D", s.data(), "-m", "immediate", "-w", "stop")
	os.RemoveAll(s.dir)
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

// opts are the server's options: its port and socket directory, and no
// durability a test needs.
func (s *Server) opts() string {
	return fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
		s.port, s.dir)
}

// run runs one of the server's programs, as the postgres user when we are
// root.
func (s *Server) run(prog string, args ...string) (string, error) {
	argv := append([]string{filepath.Join(s.bin, prog)}, args...)
	if s.asPG {
		argv = append([]string{"runuser", "-u", "postgres", "--"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = s.dir
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// binDir finds the newest /usr/lib/postgresql/N/bin with initdb in it.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL server binaries (initdb): apt-get install postgresql (.ci/run installs it)")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func chownToPostgres(dir string) error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root, the server needs the postgres user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(dir, uid, gid)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
