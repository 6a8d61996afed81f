//go:build !benchnostore

package db

// KeepsNothing is true only in a daemon built with -tags benchnostore:
// bench/run's bound of any store on albedo's path (benchnostore_on.go).
const KeepsNothing = false

// buildKeeper is the keeper of this build's writers: every batch flushed
// and committed.
func buildKeeper() keeper { return durable{} }
