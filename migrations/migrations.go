package migrations

import (
	"embed"
	"fmt"

	"github.com/uptrace/bun/migrate"
)

//go:embed *.sql
var sqlFiles embed.FS

// New returns the schema's migrations, discovered from the embedded files.
// Each call builds a fresh set so callers never share mutable state.
func New() (*migrate.Migrations, error) {
	m := migrate.NewMigrations()
	if err := m.Discover(sqlFiles); err != nil {
		return nil, fmt.Errorf("discover migrations: %w", err)
	}
	return m, nil
}
