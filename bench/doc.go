// Package bench is albedo's load tool, the peers it is measured against and
// the scripts that run them, in a module of its own so that the main module
// depends on none of them.
//
//	cmd/albedo-bench   drives a daemon (or a peer, or a cluster of either)
//	                   over real websockets and prints one table
//	peers/wsbroadcast  a bare coder/websocket broadcast server: the floor
//	peers/centrifuge   a server on github.com/centrifugal/centrifuge with
//	                   history and recovery on; -redis makes its nodes a
//	                   cluster
//	peers/jetstream    the durable peer: an embedded NATS server with
//	                   JetStream on file storage; -plain is a plain NATS
//	                   server, what an albedo cluster's nodes talk over
//	run                builds albedo, the tool and the peers, runs every
//	                   scenario against each, and rewrites the load-tool
//	                   section of docs/benchmarks.md
//	cluster            the persist scenario on SQLite, on PostgreSQL, and
//	                   on three nodes sharing PostgreSQL; prints a table
//	fanout-cluster     fan-out on one node against three (albedo over
//	                   PostgreSQL and NATS, centrifuge over Redis); prints
//	                   a table
//	crowd-cluster      the crowd scenario spread over three nodes (albedo
//	                   over PostgreSQL and NATS, centrifuge over Redis),
//	                   its storm taking one node away; prints the tables
//	pairs              one scenario (the storm, one viewer, persist)
//	                   against two builds, a revision and the work tree,
//	                   in interleaved rounds; prints each round's figure,
//	                   the medians and the ratios
//
// Each script builds what it runs, starts its servers itself, and says at
// its top how to run it (`bash bench/run`; ROUNDS and DUR set the rounds
// and the length of each run).
package bench
