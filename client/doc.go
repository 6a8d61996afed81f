// Package client is the Go SDK of albedo: daemon discovery (and optional
// auto-start), the HTTP API, and the multiplexed websocket stream that
// survives daemon restarts.
//
// A Client is built from $ALBEDO_HOME/daemon.json and re-reads it whenever a
// call cannot reach the daemon, because the port and token change at every
// start. Reads retry across a restart; writes retry only where the contract
// makes them idempotent (a session PUT with If-None-Match: *, an input PUT
// with its input_id, a DELETE; a DELETE retried after an answer was lost
// reports not_found for the delete that did land).
package client
