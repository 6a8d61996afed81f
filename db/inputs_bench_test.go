package db

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"albedo/db/pgtest"
	"albedo/wire"
)

// BenchmarkSend accepts users' inputs (a receipt's row and its message,
// as a send does) on SQLite and on the package's PostgreSQL, at 1 and 10
// writers, each sending to its own session and waiting for its receipt.
// Reported: inputs/s.
func BenchmarkSend(b *testing.B) {
	for _, store := range []string{"sqlite", "postgres"} {
		for _, writers := range []int{1, 10} {
			b.Run(fmt.Sprintf("store=%s/writers=%d", store, writers), func(b *testing.B) {
				var d *DB
				if store == "postgres" {
					d = openOn(b, pgtest.Shared(b).Database(b), Options{})
				} else {
					d = openTest(b, Options{})
				}
				ctx := context.Background()
				eachWriter(b, d, writers, func(session string) error {
					id := uuid.Must(uuid.NewV7()).String()
					_, err := d.Writer().Do(ctx, func(tx *Tx) error {
						_, _, _, err := tx.PutInput(ctx, session, id, "a user's input", wire.RoleUser, wire.Author{Name: "u"})
						return err
					})
					return err
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "inputs/s")
			})
		}
	}
}
