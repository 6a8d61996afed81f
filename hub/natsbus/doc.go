// Package natsbus is the cluster's bus over core NATS: a peer.Bus that
// publishes each kind of notice on a subject of its own
// (albedo.CLUSTER.KIND) and asks one node over a request subject that
// every node hears and only the addressee answers. The daemon builds it
// (cmd/albedo) and hands it to the hub; docs/cluster.md says what each
// subject carries and what a lost notice costs.
//
// # Files
//
//	doc.go      this overview
//	natsbus.go  Bus: New, Start (subscriptions), Publish, Ask
package natsbus
