// Package wire holds the albedo v1 contract as Go types: the JSON frames of
// the websocket, the events of the durable log, receipts, sessions and the
// error codes shared by the HTTP API and the websocket.
//
// It imports nothing but the standard library so that every other package
// (daemon, client, bots, tests) can speak the contract without pulling in
// server code. The prose version of the contract is docs/protocol.md.
package wire

// Subprotocol is the websocket subprotocol every client must offer.
const Subprotocol = "albedo.v1"

// Version is the daemon's version string, reported in hello and daemon.json.
const Version = "0.1.0"
