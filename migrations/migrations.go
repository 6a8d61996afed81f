package migrations

import (
	"embed"
	"fmt"
	"io/fs"

	"github.com/uptrace/bun/migrate"
)

//go:embed *.sql
var sqlFiles embed.FS

//go:embed postgres/*.sql
var pgFiles embed.FS

// New returns the schema's migrations for SQLite, discovered from the
// embedded files. Each call builds a fresh set so callers never share
// mutable state.
func New() (*migrate.Migrations, error) { return discover(sqlFiles) }

// NewPostgres returns the schema's migrations for PostgreSQL (postgres/):
// a set of their own, never a translation of the SQLite files at run time.
func NewPostgres() (*migrate.Migrations, error) {
	sub, err := fs.Sub(pgFiles, "postgres")
	if err != nil {
		return nil, err
	}
	return discover(sub)
}

func discover(files fs.FS) (*migrate.Migrations, error) {
	m := migrate.NewMigrations()
	if err := m.Discover(files); err != nil {
		return nil, fmt.Errorf("discover migrations: %w", err)
	}
	return m, nil
}
