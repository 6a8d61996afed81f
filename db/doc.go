// Package db is albedo's storage: SQLite in WAL mode through bun, the
// schema's migrations, the queries, and the group-commit writer.
//
// Every write goes through one writer goroutine (see Writer). It gathers
// whatever requests are waiting, runs each inside its own savepoint of one
// transaction, assigns each session's next dense offsets, commits once, hands
// the committed events to the commit hook in commit order, and only then
// answers each caller. Reads use a separate pool of connections and never
// wait for the writer.
package db
