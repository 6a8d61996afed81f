package db

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A store that needs migrations is migrated on purpose (Migrate) and, with
// NoMigrate, refused by name rather than migrated; a store migrated by a
// newer build (a migration this one does not know) is refused, whatever
// the options, before anything is written.
func TestMigrationsAreSeenAndANewerSchemaRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, target string) {
		ctx := context.Background()
		if _, err := Open(ctx, target, Options{NoMigrate: true}); !errors.Is(err, ErrMigrationsPending) || !strings.Contains(err.Error(), "albedo migrate") {
			t.Fatalf("a fresh store with NoMigrate: %v, want ErrMigrationsPending naming albedo migrate", err)
		}
		applied, err := Migrate(ctx, target)
		if err != nil || len(applied) == 0 {
			t.Fatalf("migrate: %v %v", applied, err)
		}
		d := openOn(t, target, Options{NoMigrate: true})
		if got := d.Migrated(); len(got) != 0 {
			t.Fatalf("Open applied %v to a migrated store", got)
		}
		// What a newer build would have left: a migration this one does not know.
		if _, err := d.rw.ExecContext(ctx, `INSERT INTO bun_migrations (name, group_id, migrated_at) VALUES ('29991231000099_future', 99, CURRENT_TIMESTAMP)`); err != nil {
			t.Fatal(err)
		}
		for _, opts := range []Options{{}, {NoMigrate: true}} {
			_, err := Open(ctx, target, opts)
			if !errors.Is(err, ErrSchemaNewer) || !strings.Contains(err.Error(), "29991231000099_future") {
				t.Fatalf("a newer schema (%+v): %v, want ErrSchemaNewer naming the migration", opts, err)
			}
		}
		if _, err := Migrate(ctx, target); !errors.Is(err, ErrSchemaNewer) {
			t.Fatalf("migrate on a newer schema: %v", err)
		}
	})
}
