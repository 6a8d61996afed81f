package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/migrate"

	"albedo/migrations"
)

// ErrSchemaNewer refuses a database migrated by a newer build: this one
// does not know what the schema has become, and must not serve it.
var ErrSchemaNewer = errors.New("the database's schema is newer than this build")

// ErrMigrationsPending refuses, with Options.NoMigrate, a database whose
// schema is older than this build's.
var ErrMigrationsPending = errors.New("the database needs migrations")

// Migrate runs the schema's migrations on the database target names (a
// SQLite file's path, or a postgres:// URL), on purpose rather than as
// Open does at start, and returns the names of those it applied; none is
// a schema already up to date.
func Migrate(ctx context.Context, target string) ([]string, error) {
	if IsPostgres(target) {
		d, err := openPostgres(ctx, target, Options{})
		if err != nil {
			return nil, err
		}
		defer d.Close(ctx)
		return d.migrated, nil
	}
	wsql, err := sql.Open("sqlite3", dsn(target, false, "", busyWait))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", target, err)
	}
	wsql.SetMaxOpenConns(1)
	rw := bun.NewDB(wsql, sqlitedialect.New())
	defer rw.Close()
	return migrateApply(ctx, rw, migrations.New, true)
}

// Migrated names the migrations Open applied, for the daemon's log.
func (d *DB) Migrated() []string { return d.migrated }

// migrateApply applies set's migrations that the database has not had,
// and returns their names. Unless apply, it applies none and refuses a
// database that needs any (ErrMigrationsPending). It refuses one that has
// had a migration the set does not know (ErrSchemaNewer), before
// anything else.
func migrateApply(ctx context.Context, rw *bun.DB, set func() (*migrate.Migrations, error), apply bool) ([]string, error) {
	ms, err := set()
	if err != nil {
		return nil, err
	}
	m := migrate.NewMigrator(rw, ms, migrate.WithMarkAppliedOnSuccess(true))
	if err := m.Init(ctx); err != nil {
		return nil, fmt.Errorf("init migrations: %w", err)
	}
	unknown, err := m.MissingMigrations(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the applied migrations: %w", err)
	}
	known := ms.Sorted()
	if len(unknown) > 0 {
		newest := "none"
		if len(known) > 0 {
			newest = known[len(known)-1].String()
		}
		return nil, fmt.Errorf("%w: it has had migration %s, which this build does not know (its newest is %s); run the build that migrated it, or a newer one", ErrSchemaNewer, unknown[0].Name, newest)
	}
	if !apply {
		status, err := m.MigrationsWithStatus(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the migrations' status: %w", err)
		}
		if pending := status.Unapplied(); len(pending) > 0 {
			var names []string
			for _, p := range pending {
				names = append(names, p.String())
			}
			return nil, fmt.Errorf("%w: %s; run albedo migrate (or start the daemon without --no-migrate)", ErrMigrationsPending, strings.Join(names, ", "))
		}
		return nil, nil
	}
	g, err := m.Migrate(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	var names []string
	for _, mg := range g.Migrations {
		names = append(names, mg.String())
	}
	return names, nil
}
