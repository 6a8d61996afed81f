// Package db is albedo's storage: SQLite in WAL mode or PostgreSQL, both
// through bun, the schema's migrations (one set per backend), the queries,
// the group-commit writer, and turn leases.
//
// Open picks the backend from its target: a file path is SQLite, which one
// daemon owns (open.go: pragmas, checkpoints, a one-connection writer,
// which rewinds the WAL between two batches when it grows past its limit:
// rewind.go); a
// postgres:// URL is PostgreSQL, which several daemons share
// (open_postgres.go). Statements written by hand use SQLite's ?
// placeholders and are rewritten for PostgreSQL once (dialect.go).
//
// Every write of a daemon goes through one writer goroutine (see Writer).
// It gathers whatever requests are waiting and runs them, one after the
// other, in one transaction, assigning each session's next dense offsets;
// it commits once, hands the committed events to the commit hook in commit
// order, and only then answers each caller. The requests run without
// savepoints; if one fails, the batch is rolled back and run again with a
// savepoint per request, so that the failing one costs only itself
// (Writer.commit). On SQLite the writer is alone and keeps each session's
// head in memory; on PostgreSQL a batch takes the heads from the session
// rows it locks, without ever waiting while it holds one (lock.go), so
// that offsets stay dense across daemons and none deadlocks. Reads use
// other connections and never wait for the writer.
//
// On SQLite the events of a batch of many sessions with few events each go
// to an append-ordered log, which the writer moves into the per-session
// tree in bulk once it holds foldRows of them; reads take the union of
// both (fold.go). Such a batch leaves the rows of the sessions it logged
// as they were: sessions are read through the view sessions_now, which
// takes their counters from the log, and the fold writes them into the
// rows. Every input's message takes its id in input_ids, the
// record that makes inputs idempotent.
//
// On PostgreSQL a session's turns run on one daemon at a time, the holder
// of its lease in runs, and every turn write checks the lease's fence
// (runs.go).
package db
