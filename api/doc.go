// Package api is the daemon's edge: the echo routes of the HTTP API, bearer
// token auth, and the websocket endpoint /v1/ws with its frame codec; and
// the browser client's page and assets at / and /assets/ (page.go, the
// files of package web), under a strict Content-Security-Policy.
//
// Every error leaves here in the contract's shape ({"error":{...}} over
// HTTP, an error reply over the websocket) with a code from api/wire. Only
// this package knows about HTTP statuses and websocket close codes; the hub
// below it knows sessions and cursors.
//
// Each websocket connection has two goroutines, started as the HTTP
// handler returns (it hands the hijacked connection on, so that net/http
// lets go of the request): the reader, which decodes commands and calls
// the hub, and the writer, which waits for the hub's wake-up, pulls frames
// with hub.Conn.Fill and writes them batched, several frames per message.
// When either stops, both do, and the reader returns last (ws.go, serve).
// A heartbeat ping that waits for its pong is a third, for that while.
package api
