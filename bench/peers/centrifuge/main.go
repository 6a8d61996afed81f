// Command centrifuge is the strongest open peer for multiplexed channels
// with offset recovery: a server on github.com/centrifugal/centrifuge (the
// core of Centrifugo) with its in-memory broker, history (1000 per channel,
// 10 minutes) and recovery on, JSON protocol over websocket. Clients may
// subscribe to and publish into any channel. Nothing is written to disk.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/centrifugal/centrifuge"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	node, err := centrifuge.New(centrifuge.Config{LogLevel: centrifuge.LogLevelError})
	if err != nil {
		log.Fatal(err)
	}
	history := centrifuge.PublishOptions{HistorySize: 1000, HistoryTTL: 10 * time.Minute}
	node.OnConnecting(func(_ context.Context, _ centrifuge.ConnectEvent) (centrifuge.ConnectReply, error) {
		return centrifuge.ConnectReply{Credentials: &centrifuge.Credentials{UserID: "bench"}}, nil
	})
	node.OnConnect(func(c *centrifuge.Client) {
		c.OnSubscribe(func(e centrifuge.SubscribeEvent, cb centrifuge.SubscribeCallback) {
			cb(centrifuge.SubscribeReply{Options: centrifuge.SubscribeOptions{EnableRecovery: true}}, nil)
		})
		c.OnPublish(func(e centrifuge.PublishEvent, cb centrifuge.PublishCallback) {
			cb(centrifuge.PublishReply{Options: history}, nil)
		})
	})
	if err := node.Run(); err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/connection/websocket", centrifuge.NewWebsocketHandler(node, centrifuge.WebsocketConfig{}))
	fmt.Printf("listening on %d\n", ln.Addr().(*net.TCPAddr).Port)
	log.Fatal(http.Serve(ln, nil))
}
