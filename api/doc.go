// Package api is the daemon's edge: the echo routes of the HTTP API, bearer
// token auth and the permission table of the routes, the bounds on what a
// client without a token may hold (gate.go), readiness and metrics; and
// the browser client's page and assets at / and /assets/ (page.go, the
// files of package web), under a strict Content-Security-Policy.
//
// Every error leaves here in the contract's shape ({"error":{...}} over
// HTTP, an error reply over the websocket) with a code from wire. Only
// this package knows about HTTP statuses, and only it and api/ws about
// websocket close codes; the hub below them knows sessions and cursors.
//
// The websocket endpoint /v1/ws is package api/ws: this package
// authenticates the upgrade's header, if any, and hands the request to it
// (ws.Server.Serve); tokens revoked here close their websockets there.
//
// # Files
//
//   - server.go: Server, its options and routes; Bye, Close, /healthz.
//   - auth.go: bearer tokens and the routes' permission table;
//     auth_words.go: what each route does, in the words of a refusal.
//   - session.go: session tokens, which a page sends with its HTTP calls
//     instead of its own: handed out in a hello's reply, signed with a
//     secret of this boot, refused once their token is revoked.
//   - gate.go: the bounds on what a client without a token may hold
//     (the listener that keeps them, keep-alive only with a token), the
//     Host check against DNS rebinding and the Origin's scheme: the gate
//     before any route.
//   - fresh_conns.go: the connections whose request has not come whole,
//     bounded: which may be closed for room, and what a connection's first
//     bytes, peeked at accept, say of its request.
//   - upgrades.go: the listener the http.Server is given without TLS,
//     which reads each connection's first request itself and serves a
//     websocket upgrade straight to api/ws, without net/http and echo;
//     anything else, and any upgrade that would be refused, goes to
//     net/http with the bytes read. upgrade_request.go: that request
//     parsed, the echo chain's checks applied to it, its ResponseWriter.
//   - peek_linux.go, peek_other.go: that peek (on Linux only; elsewhere a
//     connection at the bound waits for room).
//   - open_conns.go: the bound on the connections held open at once,
//     under the file descriptor limit: at it, the listener accepts no
//     more until one closes; and each one's progress to its first
//     request's end.
//   - sessions.go, admin.go: the session routes; bots, shares, and the
//     stored tokens re-read on SIGHUP.
//   - tokens.go: owner tokens (/v1/tokens), the tokens command's way to a
//     daemon that holds its SQLite file.
//   - forks.go, compact.go, import.go: a session's forks made and listed;
//     a compaction by hand; the events of a session restored from an
//     export.
//   - reads.go: the caller's read marker in a session.
//   - pins.go: the caller's pinned sessions: pin, unpin, list.
//   - blobs.go: files: PUT, HEAD and GET /v1/blobs/{sha256}, streamed,
//     ranged, served so that nothing in them runs.
//   - approvals.go: the tool calls waiting for a decision, a decision,
//     and the tools a session may call.
//   - members.go: members, their personal tokens, and their grants to
//     sessions.
//   - search.go, usage.go: full-text search over the messages the caller
//     may read; what the turns cost, summed (admins only).
//   - nostore.go: what a reply that carries a token says to caches.
//   - errors.go: every error in the contract's shape, and its status.
//   - ready.go, metrics.go: /readyz and the Prometheus collector.
//   - page.go: the browser client's page and assets, and its policy.
package api
