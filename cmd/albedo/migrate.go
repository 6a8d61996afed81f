package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"albedo/db"
)

// `albedo migrate` brings the store's schema to this build's, on purpose:
// a daemon does it itself at start unless --no-migrate, and a cluster's
// operator runs it once, before the rolling restart to a new build.
func newMigrateCmd(g *globals) *cobra.Command {
	var dbURL string
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "bring the store's schema to this build's (a daemon does it at start unless --no-migrate)",
		Long: "Apply the migrations this build has and the store has not had, and print their names.\n" +
			"The store is --db's, else config.toml's database_url, else the home's SQLite file, as the\n" +
			"daemon's. A store migrated by a newer build is refused, as the daemon refuses it.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, target, err := g.homeStore(dbURL)
			if err != nil {
				return err
			}
			if pid, held := sqliteHeld(home, target); held {
				// It holds the file for itself, and migrated it when it started.
				return fmt.Errorf("the daemon running on %s (pid %d) holds its SQLite file, and migrated it when it started: albedo stop, then albedo migrate", home, pid)
			}
			applied, err := db.Migrate(cmd.Context(), target)
			if err != nil {
				return err
			}
			if len(applied) == 0 {
				fmt.Fprintf(g.stdout, "%s: the schema is this build's; nothing to apply\n", db.RedactURL(target))
				return nil
			}
			fmt.Fprintf(g.stdout, "%s: applied %s\n", db.RedactURL(target), strings.Join(applied, ", "))
			return nil
		},
	}
	cmd.Flags().StringVar(&dbURL, "db", "", "the store: a postgres:// URL (default: database_url in config.toml, else the home's SQLite file), as albedo daemon --db")
	return cmd
}
