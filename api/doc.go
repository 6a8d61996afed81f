// Package api is the daemon's edge: the echo routes of the HTTP API, bearer
// token auth, and the websocket endpoint /v1/ws with its frame codec; and
// the browser client's page and assets at / and /assets/ (page.go, the
// files of package web), under a strict Content-Security-Policy.
//
// Every error leaves here in the contract's shape ({"error":{...}} over
// HTTP, an error reply over the websocket) with a code from wire. Only
// this package knows about HTTP statuses and websocket close codes; the hub
// below it knows sessions and cursors.
//
// Each websocket connection has a reader goroutine, started once hello is
// served (on a goroutine of its own, which the HTTP handler starts as it
// returns, so that net/http lets go of the request): it decodes commands
// and calls the hub. Its writer runs only while there is something to
// write: the hub's wake-up (hub.Conn.OnWake) queues it on the server's
// writer pool, whose few goroutines take writers in turn (ws_pool.go); it
// pulls frames with hub.Conn.Fill, writes them batched, several frames per
// message, and ends when Fill has nothing more (ws_write.go). A write that
// would wait for a slow peer, or a close handshake, takes its goroutine
// out of the pool, so that one peer never holds the others' writes. When
// the reader or a writer fails, the connection ends, and the reader returns last (ws.go,
// read). A heartbeat ping that waits for its pong runs on its timer's
// goroutine for that while; none is sent while a write waits for its peer,
// which the write timeout rules. An idle connection holds no buffer: its
// socket is a leanConn (ws_lean.go); a control frame others write (a
// ping, a pong, a close) that waits for its peer lends the writers' pool a
// worker meanwhile, as the connection's writer may wait for it on one
// (ws_lean_write.go).
package api
