package db

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"albedo/db/pgtest"
	"albedo/wire"
)

// BenchmarkFork forks a session of 1 000 and of 100 000 events at its
// middle, each fork a request of its own: a chat (a user's message, its
// turn's start, the reply and the turn's close, over and over) and posts
// (messages and no turn: the worst case, where the fork reads back to the
// start for the last turn). It reports what a fork takes
// (ms/op) and what it adds to the store (bytes/fork: the SQLite file
// after a checkpoint, or PostgreSQL's pg_database_size), next to the
// size of the session it forks (session_bytes). ALBEDO_FORK_BACKEND=postgres
// runs it on the package's PostgreSQL instead of SQLite.
func BenchmarkFork(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
		turn bool
	}{{"chat", 1000, true}, {"chat", 100_000, true}, {"posts", 1000, false}, {"posts", 100_000, false}} {
		n := c.n
		b.Run(fmt.Sprint(c.name, "/events=", n), func(b *testing.B) {
			var d *DB
			if os.Getenv("ALBEDO_FORK_BACKEND") == "postgres" {
				d = openOn(b, pgtest.Shared(b).Database(b), Options{})
			} else {
				d = openTest(b, Options{})
			}
			ctx := context.Background()
			empty := storeBytes(b, d)
			createSession(b, d, "p")
			text := strings.Repeat("a few words of a message ", 8)
			for done := 0; done < n; done += 2000 {
				if _, err := d.Writer().Do(ctx, func(tx *Tx) error {
					evs := make([]wire.Event, min(2000, n-done))
					for i := range evs {
						evs[i] = wire.Event{Type: wire.EventMessage, Role: wire.RoleUser, Text: text}
						switch i % 4 {
						case 1, 3:
							if c.turn {
								evs[i] = wire.Event{Type: wire.EventTurn, TurnID: "t", State: []string{wire.TurnStarted, wire.TurnCompleted}[i%4/2]}
							}
						case 2:
							evs[i].Role = wire.RoleAssistant
						}
					}
					_, err := tx.Append(ctx, "p", evs...)
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
			if d.dialect.pg {
				// The statistics autovacuum would have gathered after such
				// a load: without them, the planner takes the session for
				// a few rows.
				if _, err := d.ro.DB.ExecContext(ctx, `ANALYZE`); err != nil {
					b.Fatal(err)
				}
			}
			before := storeBytes(b, d)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := d.Writer().Do(ctx, func(tx *Tx) error {
					_, _, err := tx.Fork(ctx, ForkOf{Parent: "p", At: int64(n / 2), Child: Session{ID: fmt.Sprint("f", i), Epoch: "e"}})
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(storeBytes(b, d)-before)/float64(b.N), "bytes/fork")
			b.ReportMetric(float64(before-empty), "session_bytes")
		})
	}
}

// storeBytes is the store's size: SQLite's file after a checkpoint that
// empties the WAL, or the PostgreSQL database's.
func storeBytes(b *testing.B, d *DB) int64 {
	b.Helper()
	ctx := context.Background()
	if d.dialect.pg {
		var n int64
		if err := d.ro.DB.QueryRowContext(ctx, `SELECT pg_database_size(current_database())`).Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	if _, err := d.ckpt.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(d.path)
	if err != nil {
		b.Fatal(err)
	}
	return st.Size()
}
