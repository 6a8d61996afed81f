//go:build benchnostore

package db

// KeepsNothing: this daemon was built with -tags benchnostore, for
// bench/run alone. Its writer runs every batch as always (BEGIN, each
// request's checks, the heads kept in memory, the receipts and the events
// handed on) but writes nothing: no flush, and a ROLLBACK where the COMMIT
// was. It is albedo's path with the store taken out, the bound any store
// on it can reach (issue 16, goal 2: docs/benchmarks.md). It keeps
// nothing and must never serve anyone.
const KeepsNothing = true
