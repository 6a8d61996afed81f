package db

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"albedo/wire"
)

// BenchmarkAppend compares group commit with one transaction per event, at
// 1, 10 and 100 concurrent writers, each appending one event per request to
// its own session, with synchronous=NORMAL (the daemon's setting) and FULL
// (an fsync per commit). Reported: events/s.
func BenchmarkAppend(b *testing.B) {
	for _, syncMode := range []string{"normal", "full"} {
		for _, mode := range []string{"group", "single"} {
			for _, writers := range []int{1, 10, 100} {
				benchAppend(b, syncMode, mode, writers)
			}
		}
	}
}

func benchAppend(b *testing.B, syncMode, mode string, writers int) {
	b.Run(fmt.Sprintf("sync=%s/%s/writers=%d", syncMode, mode, writers), func(b *testing.B) {
		d := openTest(b, Options{NoGroupCommit: mode == "single", Synchronous: syncMode})
		ctx := context.Background()
		eachWriter(b, d, writers, func(session string) error {
			_, err := appendText(ctx, d, session, "benchmark event text")
			return err
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
}

// eachWriter makes sessions s0… for writers, then has each writer call
// write with its own session until b.N calls are made in all.
func eachWriter(b *testing.B, d *DB, writers int, write func(session string) error) {
	for w := range writers {
		createSession(b, d, fmt.Sprintf("s%d", w))
	}
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := range writers {
		wg.Go(func() {
			session := fmt.Sprintf("s%d", w)
			for left.Add(-1) >= 0 {
				if err := write(session); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkFold moves a log of 1024 events of 100 sessions (about ten
// each, as at 100 writers) into events; ns/event is per event moved. The
// batch that fills the log would send ten events of a session straight
// into events (logs), so it is told to log them all.
func BenchmarkFold(b *testing.B) {
	d := openTest(b, Options{FoldRows: 1 << 30, AlwaysLog: true})
	ctx := context.Background()
	const sessions, rows = 100, 1024
	for i := range sessions {
		createSession(b, d, fmt.Sprint("session-", i))
	}
	text := wire.Event{Type: wire.EventMessage, Role: wire.RoleBot, Text: "a post of a typical length, some seventy bytes of text in it"}
	for b.Loop() {
		b.StopTimer()
		if _, err := d.Writer().Do(ctx, func(tx *Tx) error {
			for i := range rows {
				if _, err := tx.Append(ctx, fmt.Sprint("session-", i%sessions), text); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := fold(ctx, d.rw.DB); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/event")
}

// BenchmarkSessionsPage reads the first page of 100 sessions, and the
// whole list a page of 1 000 at a time, in a home of 10 000 sessions
// (GET /v1/sessions and the Go client's Sessions). Reported: sessions
// read per page or walk, and its time.
func BenchmarkSessionsPage(b *testing.B) {
	d := openTest(b, Options{})
	ctx := context.Background()
	const n = 10_000
	createSessions(b, d, n, Session{Epoch: "e"})
	b.Run("first page of 100", func(b *testing.B) {
		for b.Loop() {
			if ss, _, err := d.SessionsPage(ctx, "", 100, nil, nil); err != nil || len(ss) != 100 {
				b.Fatal(len(ss), err)
			}
		}
	})
	b.Run("every page of 1000", func(b *testing.B) {
		for b.Loop() {
			read, after := 0, ""
			for {
				ss, more, err := d.SessionsPage(ctx, after, 1000, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				read += len(ss)
				if !more {
					break
				}
				after = ss[len(ss)-1].ID
			}
			if read != n {
				b.Fatal(read)
			}
		}
	})
}

// BenchmarkSessionRead reads one session of 10 000 by id: the whole row
// (Session: the API's reads) and the part a watched session keeps
// (SessionState: each session of a storm of reconnects, once).
func BenchmarkSessionRead(b *testing.B) {
	d := openTest(b, Options{})
	ctx := context.Background()
	const n = 10_000
	createSessions(b, d, n, Session{Epoch: "e", Title: "a session's title", System: "a system prompt of a sentence or two"})
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%05d", i)
	}
	b.Run("row", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := d.Session(ctx, ids[i%n]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("state", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := d.SessionState(ctx, ids[i%n]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	// A connection's context, as the hub reads with: one that can end.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.Run("state, a cancellable context", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := d.SessionState(cctx, ids[i%n]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// createSessions makes n sessions like s, "s00000" on, 500 a transaction.
func createSessions(b *testing.B, d *DB, n int, s Session) {
	b.Helper()
	ctx := context.Background()
	for i := 0; i < n; i += 500 {
		if _, err := d.Writer().Do(ctx, func(tx *Tx) error {
			for j := i; j < min(i+500, n); j++ {
				s.ID = fmt.Sprintf("s%05d", j)
				if _, _, err := tx.CreateSession(ctx, s); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEveryGrant reads every grant of 18 000 members, three
// sessions each (a crowd's), as the hub does at its start (EachGrant).
func BenchmarkEveryGrant(b *testing.B) {
	d := openTest(b, Options{})
	ctx := context.Background()
	const members, each = 18_000, 3
	createSessions(b, d, members, Session{Epoch: "e"})
	for i := 0; i < members; i += 500 {
		if _, err := d.Writer().Do(ctx, func(tx *Tx) error {
			for m := i; m < min(i+500, members); m++ {
				for k := range each {
					g := Grant{Session: fmt.Sprintf("s%05d", (m+k*6000)%members), Member: fmt.Sprintf("m%05d", m), Access: wire.AccessWrite}
					if err := tx.PutGrant(ctx, g); err != nil {
						return err
					}
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		n := 0
		if err := d.EachGrant(ctx, func(string, string, wire.Access) { n++ }); err != nil || n != members*each {
			b.Fatal(n, err)
		}
	}
}
