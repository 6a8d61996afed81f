// Command centrifuge is the strongest open peer for multiplexed channels
// with offset recovery: a server on github.com/centrifugal/centrifuge (the
// core of Centrifugo) with its in-memory broker, history (1000 per channel,
// 10 minutes) and recovery on, JSON protocol over websocket. Clients may
// subscribe to and publish into any channel. Nothing is written to disk.
//
// With -redis ADDR it uses the library's Redis broker and presence manager
// instead (history in Redis streams, publications over Redis PUB/SUB), so
// several of these processes on one Redis are one centrifuge cluster: a
// publication through one reaches subscribers of every other. The library
// (this version) has no NATS broker; Centrifugo's lives in Centrifugo.
// POST /bench/outage?for=1s drops every connection and refuses new ones
// for that long: the reattach scenario's restart.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/centrifugal/centrifuge"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	redis := flag.String("redis", "", "a Redis address (host:port): use the Redis broker and presence manager instead of memory")
	flag.Parse()
	node, err := centrifuge.New(centrifuge.Config{LogLevel: centrifuge.LogLevelError})
	if err != nil {
		log.Fatal(err)
	}
	if *redis != "" {
		if err := useRedis(node, *redis); err != nil {
			log.Fatal(err)
		}
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
	ws := centrifuge.NewWebsocketHandler(node, centrifuge.WebsocketConfig{})
	var down atomic.Bool
	http.HandleFunc("/connection/websocket", func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "outage", http.StatusServiceUnavailable)
			return
		}
		ws.ServeHTTP(w, r)
	})
	// The load tool's stand-in for a restart: the memory broker's history
	// would die with the process, so the process stays and only its
	// connections go, refused for ?for=DURATION, then accepted again.
	http.HandleFunc("POST /bench/outage", func(w http.ResponseWriter, r *http.Request) {
		d, err := time.ParseDuration(r.URL.Query().Get("for"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		down.Store(true)
		for _, c := range node.Hub().Connections() {
			c.Disconnect(centrifuge.DisconnectForceReconnect)
		}
		time.Sleep(d)
		down.Store(false)
	})
	fmt.Printf("listening on %d\n", ln.Addr().(*net.TCPAddr).Port)
	log.Fatal(http.Serve(ln, nil))
}

// useRedis makes node one of a cluster: the Redis broker (history and
// PUB/SUB) and presence manager on one Redis shard at addr.
func useRedis(node *centrifuge.Node, addr string) error {
	shard, err := centrifuge.NewRedisShard(node, centrifuge.RedisShardConfig{Address: addr})
	if err != nil {
		return fmt.Errorf("redis shard: %w", err)
	}
	broker, err := centrifuge.NewRedisBroker(node, centrifuge.RedisBrokerConfig{Shards: []*centrifuge.RedisShard{shard}})
	if err != nil {
		return fmt.Errorf("redis broker: %w", err)
	}
	node.SetBroker(broker)
	pm, err := centrifuge.NewRedisPresenceManager(node, centrifuge.RedisPresenceManagerConfig{Shards: []*centrifuge.RedisShard{shard}})
	if err != nil {
		return fmt.Errorf("redis presence: %w", err)
	}
	node.SetPresenceManager(pm)
	return nil
}
