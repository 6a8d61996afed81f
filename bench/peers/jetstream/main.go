// Command jetstream is the durable peer: a NATS server
// (github.com/nats-io/nats-server/v2, embedded) with JetStream on file
// storage, one stream over the subjects s.> (a subject per channel).
// Publishers wait for each publish's acknowledgement, which JetStream
// sends once the message is in its file store; viewers read through
// ordered consumers of the stream, so they see only what was stored, as
// albedo's viewers see only what was committed.
//
// With -plain it is a plain NATS server (core subjects, no JetStream, no
// store): what an albedo cluster's nodes carry their notices over
// (bench/fanout-cluster).
//
// Durability, as measured here: JetStream writes each message to its
// files before the ack but does not fsync it (it syncs every 2 minutes by
// default; SyncAlways would fsync each): a message acknowledged survives
// the server's process being killed, not a power cut. albedo's SQLite in
// WAL mode with synchronous=NORMAL promises the same.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func main() {
	port := flag.Int("port", -1, "listen port (-1: any free one)")
	plain := flag.Bool("plain", false, "a plain NATS server: no JetStream, no stream")
	flag.Parse()
	if *plain {
		servePlain(*port)
		return
	}
	dir, err := os.MkdirTemp("", "bench-jetstream-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// Fan-out gives each viewer an ordered consumer of the stream, and the
	// server's default of 1 000 consumers a stream (plus those of earlier
	// runs, until their inactivity ends them) refused the 1 000-viewer
	// case: no limit here, as albedo and centrifuge have none.
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: *port, JetStream: true, StoreDir: dir,
		NoLog: true, NoSigs: true, MaxPayload: 1 << 20,
		JetStreamLimits: server.JSLimitOpts{DefaultMaxConsumers: -1}})
	if err != nil {
		log.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		log.Fatal("jetstream: not ready within 10 s")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		log.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "BENCH", Subjects: []string{"s.>"}, Storage: jetstream.FileStorage})
	cancel()
	if err != nil {
		log.Fatal(err)
	}
	nc.Close()
	fmt.Printf("listening on %d\n", ns.Addr().(*net.TCPAddr).Port)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	ns.Shutdown()
}

// servePlain runs a NATS server with core subjects only until SIGTERM.
func servePlain(port int) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true, MaxPayload: 1 << 20})
	if err != nil {
		log.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		log.Fatal("nats: not ready within 10 s")
	}
	fmt.Printf("listening on %d\n", ns.Addr().(*net.TCPAddr).Port)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	ns.Shutdown()
}
