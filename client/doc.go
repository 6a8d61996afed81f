// Package client is the Go SDK of albedo: daemon discovery (and optional
// auto-start) or a server's URL, the HTTP API, and the multiplexed
// websocket stream that survives daemon restarts.
//
// A Client is built from $ALBEDO_HOME/daemon.json and re-reads it whenever a
// call cannot reach the daemon, because the port and token change at every
// start. Reads retry across a restart; writes retry only where the contract
// makes them idempotent (a session PUT with If-None-Match: *, an input PUT
// with its input_id, a DELETE; a DELETE retried after an answer was lost
// reports not_found for the delete that did land).
//
// With AutoStart, a call, Discover or a new Stream starts a daemon when
// none answers, as a user's command would. A Stream that loses its daemon
// starts the next one itself only after a crash: $ALBEDO_HOME/daemon.down
// says when the daemon was stopped on purpose or could not start, and the
// stream then waits (State Stopped or StartFailed) for a daemon to start
// or for config.toml to change.
//
// Cluster mode: a Client made with Options.URL (or, when neither a URL nor
// a home is given, $ALBEDO_URL) talks to the server at that URL, http://
// or https:// (its websocket ws:// or wss://), with Options.Token (or
// $ALBEDO_TOKEN): a daemon elsewhere, or the nodes of a cluster behind a
// load balancer. It has no home: no daemon.json, no auto-start, no boot
// check, no daemon.down. Calls retry as above against the same URL; a
// Stream reconnects to it with its jittered backoff (perhaps reaching
// another node) and reattaches every subscription from its offsets. A
// refused token ends a call or a stream at once. Discover asks /healthz
// whether anything answers; WaitHomeChange waits until something does;
// Shutdown refuses (ErrNoHome).
//
// Files: client.go (Options, New, the Client and the Snapshot of
// daemon.json it works from), home.go (a home's files, the default home,
// who holds its lock), http.go (one call and its retries; Error and Code),
// tls.go (a home's daemon over TLS, trusted by the certificate
// daemon.json names),
// api.go (the HTTP API, a method a route), tools.go (approvals,
// decisions, the tools offered, and a bot's answer to a call), members.go (the routes of
// members, their grants and personal tokens), links.go (the page's links,
// with a home's daemon key), history.go (every page of a
// session's events), blobs.go (files: uploaded once, HEAD first,
// streamed both ways), resolve.go (a session named by id, short id, title or
// part of its id), autostart.go (starting a daemon when none answers),
// down.go (daemon.down, the record of a stop on purpose or a failed start,
// and the stamp of config.toml that ends the wait for a new start),
// remote.go (cluster mode: a client of a server's URL), stream.go (the
// Stream: one websocket, many subscriptions), streamconn.go (one
// connection of a stream: dial, hello, in the upgrade when the daemon
// takes it, serve), streamstate.go (the State
// a stream shows its user), subscription.go (one session's items and
// cursor), feed.go (a stream's sessions feed: FeedUpdate, its pages, and
// its resumption on each new connection from where the last left off),
// feedlist.go (the whole feed read once, for a list such as albedo
// sessions'),
// reconnect.go (the wait between connections, watching the home for a
// new daemon) and backoff.go (the delays of that wait).
package client
