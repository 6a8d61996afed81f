// Package hub is albedo at run time: session channels, the cursors that
// stream them to connections, presence, and (in turn.go) the turn runner.
//
// The hub is a passive registry guarded by mutexes, not a goroutine. Writes
// go through db's group-commit writer; its commit hook (Hub.onCommit) is the
// only place new events enter a channel, so nothing is published before it
// is durable.
//
// A subscription is a cursor: (connection, session, next offset). The hub
// never queues events per subscriber. It marks the subscription ready and
// wakes the connection; the connection's writer goroutine calls Conn.Fill,
// which pulls each ready channel's events from the channel's ring of recent
// events or, when the cursor is behind the ring, from the database in pages.
// A slow reader therefore costs a cursor, and a late one catches up by
// paging. Only the in-progress text of a streaming reply is held per
// subscriber, merged, and dropped when the turn commits.
//
// Lock order: Conn.mu before channel.mu; Hub.mu is never held with either.
// Nothing holds a lock across I/O.
package hub
