// Package db is albedo's storage: SQLite in WAL mode through bun, the
// schema's migrations, the queries, and the group-commit writer.
//
// Every write goes through one writer goroutine (see Writer). It gathers
// whatever requests are waiting and runs them, one after the other, in one
// transaction, assigning each session's next dense offsets; it commits
// once, hands the committed events to the commit hook in commit order, and
// only then answers each caller. The requests run without savepoints; if
// one fails, the batch is rolled back and run again with a savepoint per
// request, so that the failing one costs only itself (Writer.commit).
// Reads use a separate pool of connections and never wait for the writer.
package db
