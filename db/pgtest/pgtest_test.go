package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

// The shared server starts once, gives each test a database of its own
// that takes statements, and its data directory is gone after Stop.
func TestServerAndDatabases(t *testing.T) {
	s := Shared(t)
	if Shared(t) != s {
		t.Fatal("a second server for one package")
	}
	a, b := s.Database(t), s.Database(t)
	if a == b {
		t.Fatalf("one database twice: %s", a)
	}
	for _, url := range []string{a, b} {
		db, err := sql.Open("pgx", url)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRowContext(context.Background(), "SELECT 1 + 1").Scan(&n); err != nil || n != 2 {
			t.Fatalf("%s: %d %v", url, n, err)
		}
		db.Close()
	}
	own, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	own.Stop()
	if _, err := os.Stat(own.dir); !os.IsNotExist(err) {
		t.Fatalf("the stopped server's directory remains: %v", err)
	}
}

// A server whose test process died without stopping it (a panic, a test
// binary's timeout) is stopped and removed by the next Start, and one
// whose process lives is left alone.
func TestStartStopsOrphans(t *testing.T) {
	orphan, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer orphan.Stop()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(orphan.dir, ownerFile), []byte(strconv.Itoa(dead.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	alive, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer alive.Stop()
	if _, err := os.Stat(orphan.dir); !os.IsNotExist(err) {
		t.Fatalf("the orphan's directory remains: %v", err)
	}
	if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", orphan.port)); err == nil {
		c.Close()
		t.Fatal("the orphan still listens")
	}
	next, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer next.Stop()
	if _, err := os.Stat(alive.dir); err != nil {
		t.Fatalf("a live process's server was removed: %v", err)
	}
}
