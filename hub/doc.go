// Package hub is albedo at run time: session channels, the cursors that
// stream them to connections, presence, and the turn runner. A daemon
// alone (SQLite) runs only the single-node files below. On a database
// other daemons share (PostgreSQL) the hub is one node of a cluster: a
// session's turns run only on the node holding its lease, which reads the
// queue from the database (cluster_leases.go), and the nodes tell each
// other what happened over the cluster's bus (peer.Bus, cluster_notices.go;
// the daemon's runs over NATS, albedo/hub/natsbus). docs/cluster.md says
// how to run one.
//
// # Files
//
// The single-node hub:
//
//	doc.go            this overview
//	hub.go            Hub, Options, Open, New (over a store already open), Close; the commit hook and the fan-out to cursors
//	channel.go        channel: one session at run time (head, ring, cursors, viewers, status)
//	session_loads.go  a channel's session state, read when first used: a hello's together (preload); on PostgreSQL many loads in one query
//	ring.go           ring: the recent events of a watched session, encoded for writing
//	conn.go           Conn: one client connection, its cursors and its queued replies
//	fill.go           Conn.Fill: the next batch a connection's writer writes
//	presence.go       presence: a channel's watchers as people, typing marks, the push and its pace
//	sessions.go       sessions made, listed, changed, deleted; history pages
//	sessions_push.go  the sessions push: "list again", to connections that list sessions
//	feed.go           the sessions feed: every session indexed in memory, kept up to date by commits
//	feed_conn.go      a connection's cursor over the feed: Feed, FeedPage, the pushes its writer sends
//	feed_read.go      what a cursor or a page finds in the feed's index, and the items it shows
//	feed_unread.go    a connection's unread counts: read from the store once, then counted from commits
//	reads.go          read markers: set, read, pushed to the person's other connections
//	pins.go           each person's pinned sessions, kept for the feed's items
//	models.go         a provider's models, listed for a model picker and kept a while
//	continue.go       a reply cut off, run on: its input's turn again, sent the reply so far
//	forks.go          forks made and listed; a session's events read through its spans
//	import.go         the events of a session restored from an export, each checked
//	search.go         full-text search over what the caller may read, its scan bounded per request
//	inputs.go         inputs and bot posts, accepted once per input_id
//	lifecycle.go      a session's run state (Status); the daemon's stop and drain (Stopping, Drain, WaitTurns)
//	errors.go         wireErr, AsError: the store's errors as the contract's codes
//	turn.go           the turn runner: a session's turns one at a time, streamed, checkpointed
//	compaction.go     transcripts fitted in a provider's window, the oldest messages summarized; Compact
//	titles.go         titles of sessions untitled after a turn: first words, or asked of the provider
//	usage.go          UsageReport: the turns' usage summed by session, member, provider or day
//	bots.go           bot turns: the connections serving a bot, and its provider
//	participants.go   who answers: participants checked, quiet messages, a message's mentions as its input's steps
//	tool_turns.go     the turn runner's seam to tools: a turn as steps; calls committed, decided, run, answered
//	tool_history.go   earlier turns' calls and results in a later turn's transcript, and in a summary
//	approvals.go      decisions on calls that ask (first wins), the pending ones listed, the tools offered
//	agent_turns.go    the turn runner's seam to coding agents (acphost): a turn as one prompt; its calls, notices, status
//	blobs.go          the seam to files (hub/blobs): attachments resolved for inputs, read for providers; the sweep
//	bot_tools.go      bots' tools: the connections serving them, a call handed over and answered
//	start.go          Start: turns a crash left running repaired, queued inputs queued again
//	tokens.go         the token table (access.Table) loaded; Authenticate; bot tokens
//	tokens_owner.go   owner tokens (`albedo tokens add`), the token list, reload on SIGHUP
//	members.go        members, their personal tokens, and their grants, kept in the token table
//	members_conns.go  a member's subscriptions cut when access is lost; connections counted by author
//	links.go          links: read and write tokens to one session, labelled, expiring; uses noted
//	stats.go          Stats, for the daemon's metrics
//	tracked.go        goTracked: the goroutines Close waits for, none started once it has begun
//	provider/         what answers turns: echo, OpenAI-compatible APIs, Anthropic's, acp profiles, their registry
//	acphost/          coding agents (ACP) as providers: their processes, prompts, permissions, files, commands
//	tools/            tools' names, the policy, the sources' offers, a session's call states
//	access/           who may do what: principals, role sets, the token and grant table, the text checks
//	peer/             the cluster's seam: the notices, the Bus the hub publishes through, its Handler
//	natsbus/          the Bus over NATS, which the daemon builds
//
// The cluster (a shared database, with NATS or without):
//
//	cluster_leases.go     turns under a session's lease: claim, run, renew, release; orphans
//	cluster_heartbeat.go  the heartbeat (heads re-read, viewers and run state said again); catchUp
//	cluster_notices.go    the hub as the bus's peer.Handler: the other nodes' notices and requests; what it tells them
//	cluster_bots.go       a turn handed to its bot's connection on another node
//	cluster_tools.go      bots' tools announced to the other nodes; a call run on its bot's node
//	cluster_tokens.go     a token made on another node, looked up in the store
//	cluster_changes.go    the store's changes to who may do what, followed every second (or when rung)
//	cluster_clock.go      this node's clock compared with the store's, every 30 s
//	feed_poll.go          the feed's look at the store for the sessions other nodes changed
//
// The single-node files meet the cluster in a few calls, each of which
// costs nothing on a daemon alone, whose bus is peer.Nop (never nil) and
// whose store is not shared (h.db.Shared() is false): a notice published
// (h.bus.Publish in onCommit, publishStatus, publishPresenceSoon,
// relayText, changed, publishBots), another node asked (interruptRemote,
// remoteServer), a head re-read (catchUp), a lease claimed (wake), a
// token looked up in the store (lookupStored), the feed's look at the
// store started (feed.ensure), the cluster's loops and the bus started
// (Start). What another node says arrives through peerHandler, never
// with a lock of the bus held.
//
// Tests: hub_test.go has TestMain and the helpers (newTestHub, newReader)
// with the tests of subscribing and presence; bounds_test.go what one
// connection or turn may make the daemon hold; cluster_tokens_test.go two
// nodes on one database of the package's PostgreSQL (clusterPair), and
// cluster_bus_test.go two joined by an in-memory bus (busPair);
// bench_test.go and the *_bench_test.go files the benchmarks
// (crowd_bench_test.go: what a node's work costs beside a crowd of
// connections it does not concern); the others are named for the file
// they test. Fuzz corpora are in testdata/fuzz.
//
// # How events reach connections
//
// The hub is a passive registry guarded by mutexes, not a goroutine. Writes
// go through db's group-commit writer; its commit hook (Hub.onCommit) is the
// only place new events enter a channel, so nothing is published before it
// is durable.
//
// A subscription is a cursor: (connection, session, next offset). The hub
// never queues events per subscriber. It marks the subscription ready and
// wakes the connection (Conn.OnWake); the connection's writer calls
// Conn.Fill, which pulls each ready channel's events from the channel's
// ring of recent events or, when the cursor is behind the ring, from the
// database in pages. A slow reader therefore costs a cursor, and a late
// one catches up by paging. Only the in-progress text of a streaming reply
// is held per subscriber, merged, and dropped when the turn commits. A
// connection that lists sessions is told that the list changed by a flag,
// not a queue (sessions_push.go).
//
// # Locks
//
// Lock order, outermost first: botTurn.mu (held while a bot's text is
// emitted, which publishes to the channel), botTable.mu, Conn.mu,
// channel.loadMu, channel.mu; and access.Table.Changing before access.Table's lock.
// Hub.mu, access.Table's lock and remoteBots.mu are never held with another
// lock.
//
// Three locks are held across I/O, on purpose: channel.loadMu while a
// session row is read (one load per channel); botTurn.mu while a bot's
// text is emitted, which may wait for a checkpoint commit (so that no text
// is emitted after the turn has ended; bots.go); and access.Table.Changing while
// stored tokens are written, re-read, or looked up for another node's
// token, so that a revocation is never undone by a read that raced it. No
// lock is held while a client is written to.
package hub
