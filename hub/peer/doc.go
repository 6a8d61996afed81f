// Package peer is the seam between a hub and the other nodes of its
// cluster: the notices nodes tell each other, a Bus the hub publishes
// through and asks one node with, and the Handler the hub implements for
// what arrives. A daemon alone has Nop, never nil; a cluster's daemon
// has albedo/hub/natsbus; tests join several hubs in one process with
// Memory, as centrifuge's tests join nodes with its memory broker.
//
// Every fact a notice carries is also in the store, so a bus may lose
// any notice: it costs only how soon a node learns (docs/cluster.md,
// "When a part fails").
//
// # Files
//
//	doc.go      this overview
//	notices.go  the kinds of notice and their types; requests and their answers; Encode, Decode
//	bus.go      Bus, Handler, Nop
//	memory.go   Memory: buses joined in one process
package peer
