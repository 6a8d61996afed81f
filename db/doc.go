// Package db is albedo's storage: SQLite in WAL mode or PostgreSQL, both
// through bun, the schema's migrations (one set per backend), the queries,
// the group-commit writer, and turn leases.
//
// Open picks the backend from its target: a file path is SQLite, which one
// daemon owns (open.go: pragmas, checkpoints, a one-connection writer,
// which rewinds the WAL between two batches when it grows past its limit:
// rewind.go); a postgres:// URL is PostgreSQL, which several daemons
// share (open_postgres.go). Statements written by hand use SQLite's ?
// placeholders and are rewritten for PostgreSQL once (dialect.go).
//
// Every write of a daemon goes through one writer goroutine (Writer,
// writer.go). It gathers whatever requests are waiting and runs them, one
// after the other, in one transaction (batch.go), each through its Tx
// (tx.go), assigning each session's next dense offsets; it writes what
// they appended in a few multi-row statements (flush.go), commits once,
// hands the committed events to the commit hook in commit order, and only
// then answers each caller. The requests run without savepoints; if one
// fails, the batch is rolled back and run again with a savepoint per
// request, so that the failing one costs only itself (Writer.commit). On
// SQLite the writer is alone and keeps each session's head in memory; on
// PostgreSQL a batch takes the heads from the session rows it locks,
// without ever waiting while it holds one (lock.go), so that offsets stay
// dense across daemons and none deadlocks. Reads use other connections
// and never wait for the writer.
//
// On SQLite the events of a batch of many sessions with few events each go
// to an append-ordered log, which the writer moves into events in bulk
// once it holds foldRows of them; reads take the union of both (fold.go).
// events is a rowid table: a fold appends its rows, and only its
// (session, offset) key's entries go into each session's range. Such a
// batch leaves the rows of the sessions it logged as they were: sessions
// are read through the view sessions_now, which takes their counters from
// the log, and the fold writes them into the rows. Every input's message
// takes its id in input_ids, the record that makes inputs idempotent.
//
// On PostgreSQL a session's turns run on one daemon at a time, the holder
// of its lease in runs, and every turn write checks the lease's fence
// (runs.go).
//
// # Files
//
// Opening a store:
//   - open.go: Open, SQLite's connections and pragmas, its checkpointer.
//   - open_postgres.go: PostgreSQL's pool and its migrations, one node at
//     a time.
//   - dialect.go: the two backends' differences in the SQL written by hand.
//   - faults.go: Unavailable, which of the backends' errors are the store's
//     faults that may pass (the daemon answers them unavailable).
//   - migrate.go: Migrate, the migrations run on purpose (albedo
//     migrate), and the check at every open that refuses a schema newer
//     than this build's, or, with NoMigrate, an older one.
//
// The writer:
//   - writer.go: Writer, the queue its callers use (Do, Submit, Then) and
//     its goroutine, which gathers the waiting requests into a batch.
//   - batch.go: one group commit: its transaction, its runs (optimistic,
//     then careful; again after a session row found locked) and its
//     answers.
//   - batchtx.go: a batch's transaction: database/sql's on SQLite; on
//     PostgreSQL one the writer drives in pgx's pipeline mode, BEGIN with
//     the locks and the flush with COMMIT.
//   - tx.go: Tx, a request's view of the batch, and the sessions' counters
//     (head, inputs, last turn) as the request sees them.
//   - flush.go: the batch's multi-row statements, made once in each of a
//     few sizes, and the argument lists kept from batch to batch.
//   - lock.go: PostgreSQL's session row locks, taken in an order that
//     keeps offsets dense across daemons without deadlock.
//   - fold.go: SQLite's event log, and the fold, which moves it into
//     events in bulk.
//   - rewind.go: the writer's own checkpoint between two batches, after
//     which its next commit starts SQLite's WAL again from its beginning.
//   - stats.go: the writer's counters and latency histograms; the pool's
//     statistics, and the store's clock against this machine's.
//   - benchnostore_off.go, benchnostore_on.go: each build's keeper, what
//     a batch's writes become: flushed and committed, or, in the bench's
//     build with its store taken out (-tags benchnostore, KeepsNothing),
//     neither.
//
// What requests write and readers read:
//   - sessions.go: sessions, the list's pages, heads.
//   - session_state.go: SessionState, the part of a session's row a
//     watched session keeps, read alone or many in one query; and the
//     context of SQLite's bounded reads (shortRead).
//   - events.go: Append, and the reads of a session's events.
//   - spans.go: a session's log as stored (Spans): a fork's is its
//     ancestors' rows up to its fork point, then its own; the reads of
//     events through them, and ErrMoved, when a parent's deletion moved
//     the rows a reader expected.
//   - forks.go: forks, made without a copy of their parent's events, and
//     a deleted parent's rows handed on to the fork that reads furthest.
//   - inputs.go: inputs and bot posts, accepted once per input id.
//   - turns.go: partial text of running turns, pending inputs, transcripts.
//   - toolcalls.go: a row per tool call (the turn runner's index of its
//     events): decided once by a conditional update, ended once; the
//     tools a session allows without asking.
//   - agents.go: a session's coding agent: the agent session its last
//     process held, and what the next prompt tells it.
//   - blobs.go: files by their sha256, their bytes in chunks written one
//     request each; who uploaded them; the sessions whose logs carry
//     them (from Append, forks); the sweep of what none carries.
//   - usage.go: each turn's usage, recorded as it ends, and the totals
//     summed from those rows.
//   - tokens.go: owner, bot and viewer tokens.
//   - members.go: members and their grants.
//   - reads.go: read markers, how far each person has read each session.
//   - pins.go: the sessions each person pinned.
//   - feed.go: what the sessions feed reads: every session, those
//     changed or deleted (tombstones) since a time, a session's newest
//     message, a person's unread count.
//   - search.go: full-text search over messages, numbered by the batch
//     that commits them; searchquery.go parses what people type into both
//     stores' syntax; searchmatch.go matches it in Go, as the index would,
//     for the messages SQLite's index does not hold yet.
//   - searchindex.go: SQLite's text index, in a file of its own written
//     by its own goroutine.
//   - changes.go: PostgreSQL's record of changes to who may do what, which
//     every node of a cluster follows.
//   - runs.go: PostgreSQL's turn leases.
package db
