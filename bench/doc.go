// Package bench is albedo's load tool and the peers it is measured against,
// in a module of its own so that the main module depends on none of them.
//
//	cmd/albedo-bench   drives a daemon (or a peer) over real websockets
//	peers/wsbroadcast  a bare coder/websocket broadcast server: the floor
//	peers/centrifuge   a server on github.com/centrifugal/centrifuge with
//	                   history and recovery on
//	run                builds everything and rewrites docs/benchmarks.md
package bench
