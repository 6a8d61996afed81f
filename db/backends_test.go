package db

import (
	"context"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"albedo/db/pgtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.ThenStop(m)) }

// eachBackend runs fn as a subtest on each backend, the two side by side
// (and beside the package's other parallel tests), with a fresh target:
// a SQLite file, and a database of its own on the package's private
// PostgreSQL (db/pgtest). Tests of what only SQLite has (its WAL, its
// query plans) call openTest instead.
func eachBackend(t *testing.T, fn func(t *testing.T, target string)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, filepath.Join(t.TempDir(), "albedo.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, pgtest.Shared(t).Database(t))
	})
}

// eachBackendInTurn runs fn on each backend as eachBackend does, but one
// after the other, for a test that changes what the whole process shares
// (GOMAXPROCS) and so must run alone: its caller does not call
// t.Parallel either.
func eachBackendInTurn(t *testing.T, fn func(t *testing.T, target string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, filepath.Join(t.TempDir(), "albedo.db")) })
	t.Run("postgres", func(t *testing.T) { fn(t, pgtest.Shared(t).Database(t)) })
}

// openTest opens a new SQLite database for t.
func openTest(t testing.TB, opts Options) *DB {
	t.Helper()
	return openOn(t, filepath.Join(t.TempDir(), "albedo.db"), opts)
}

// openOn opens target for t and closes it when t ends.
func openOn(t testing.TB, target string, opts Options) *DB {
	t.Helper()
	d, err := Open(context.Background(), target, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return d
}
