// Package hub is albedo at run time: session channels, the cursors that
// stream them to connections, presence, and (in turn.go) the turn runner.
// On a database other daemons share (PostgreSQL), a session's turns run
// only on the daemon holding its lease, which reads the queue from the
// database (leases.go).
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
// subscriber, merged, and dropped when the turn commits. A connection that
// lists sessions is told that the list changed by a flag, not a queue
// (listeners.go).
//
// Lock order, outermost first: botTurn.mu (held while a bot's text is
// emitted, which publishes to the channel), botTable.mu, Conn.mu,
// channel.loadMu, channel.mu; and tokenTable.ops before tokenTable.mu.
// Hub.mu, tokenTable.mu, remoteBots.mu and bus.mu are never held with
// another lock.
//
// Three locks are held across I/O, on purpose: channel.loadMu while a
// session row is read (one load per channel); botTurn.mu while a bot's
// text is emitted, which may wait for a checkpoint commit (so that no text
// is emitted after the turn has ended; bots.go); and tokenTable.ops while
// stored tokens are written, re-read, or looked up for another node's
// token, so that a revocation is never undone by a read that raced it. No
// lock is held while a client is written to.
package hub
