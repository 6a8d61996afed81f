package pgtest

import (
	"context"
	"database/sql"
	"os"
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
