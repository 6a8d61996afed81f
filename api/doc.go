// Package api is the daemon's edge: the echo routes of the HTTP API, bearer
// token auth, and the websocket endpoint /v1/ws with its frame codec.
//
// Every error leaves here in the contract's shape ({"error":{...}} over
// HTTP, an error reply over the websocket) with a code from api/wire. Only
// this package knows about HTTP statuses and websocket close codes; the hub
// below it knows sessions and cursors.
//
// Each websocket connection has two goroutines, started when the HTTP
// handler returns (it hands the hijacked connection on, so that net/http
// lets go of the request): the reader, which decodes commands and calls
// the hub, and the writer, which waits for the hub's wake-up, pulls frames
// with hub.Conn.Fill and writes them batched, several frames per message.
// They run as one errgroup: when either stops, both do (ws.go, serve).
package api
