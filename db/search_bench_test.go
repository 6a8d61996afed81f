package db

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"albedo/db/pgtest"
	"albedo/wire"
)

// BenchmarkSearch searches a store of many messages (ALBEDO_SEARCH_MESSAGES,
// default 100 000; docs/benchmarks.md gives the figures at 1 000 000) in
// 1 000 sessions, each message twelve words drawn from a vocabulary of
// 5 000 by Zipf's law, so that a few words are in most messages and most
// in few: a rare word, the commonest, a phrase, a prefix, and a common
// word in one session. Reported: the latency of a page of 20 hits,
// p50 and p99 in ms. ALBEDO_SEARCH_BACKEND=postgres runs it on the
// package's PostgreSQL (db/pgtest) instead of SQLite.
func BenchmarkSearch(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("ALBEDO_SEARCH_MESSAGES")); err == nil && v > 0 {
		n = v
	}
	var d *DB
	if os.Getenv("ALBEDO_SEARCH_BACKEND") == "postgres" {
		d = openOn(b, pgtest.Shared(b).Database(b), Options{})
	} else {
		d = openTest(b, Options{})
	}
	ctx := context.Background()
	const sessions, perTx = 1000, 2000
	for i := range sessions {
		createSession(b, d, fmt.Sprint("s", i))
	}
	r := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(r, 1.1, 1, 4999)
	start := time.Now()
	for done := 0; done < n; done += perTx {
		s := fmt.Sprint("s", (done/perTx)%sessions)
		if _, err := d.Writer().Do(ctx, func(tx *Tx) error {
			evs := make([]wire.Event, min(perTx, n-done))
			for i := range evs {
				ws := make([]string, 12)
				for j := range ws {
					ws[j] = "w" + strconv.FormatUint(zipf.Uint64(), 10)
				}
				evs[i] = wire.Event{Type: wire.EventMessage, Role: wire.RoleAssistant, Text: strings.Join(ws, " ")}
			}
			_, err := tx.Append(ctx, s, evs...)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	waitIndexed(b, d)
	b.Logf("%d messages written and indexed in %v", n, time.Since(start).Round(time.Millisecond))
	for _, c := range []struct{ name, q, session string }{
		{"rare", "w4321", ""}, {"common", "w1", ""}, {"phrase", `"w1 w2"`, ""}, {"prefix", "w43*", ""},
		{"two-words", "w1 w3", ""}, {"in-a-session", "w1", "s7"},
	} {
		b.Run(c.name, func(b *testing.B) {
			q, err := ParseQuery(c.q)
			if err != nil {
				b.Fatal(err)
			}
			var took []time.Duration
			for b.Loop() {
				t := time.Now()
				if _, err := d.Search(ctx, q, c.session, 0, 20); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
