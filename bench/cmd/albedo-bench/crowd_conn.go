package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/centrifugal/centrifuge-go"

	"albedo/client"
	"albedo/wire"
)

// A crowd's connections are lean: at 18 000 of them on the tool's one
// CPU, a client library that decodes every push into its types costs more
// per broadcast than the server's whole delivery, and the latency
// measured would be the tool's. So albedo's crowd client speaks the
// protocol itself and reads a push's session, offset and text in place
// (eventFields, rawInt), with the same reattach contract as the client
// library: a hello whose subs carry each session's last offset and
// epoch, and the library's backoff. Its websocket is leanWS (leanws.go),
// as is the floor's: a general client's upgrade cost the tool more per
// reconnect than the daemon's, and a storm's time was the tool's.
// centrifuge's crowd runs centrifuge-go, its own client; the tool's CPU
// per delivery and per reconnect is reported beside the server's for all.

// crowdSink is what a worker learns from its connections.
type crowdSink interface {
	failed(err error)                                             // an attempt after the first that did not attach
	attached(conn int)                                            // a hello (or connect) with every sub answered
	event(conn, sub int, offset int64, text string, at time.Time) // a delivered event of sub
}

// sources are the loopback addresses the crowd's connections dial from,
// round-robin: each address has its own ephemeral ports, and one has too
// few for tens of thousands of connections and their reconnects.
func sourceAddr(i, n int) *net.TCPAddr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, byte(1+i%n/250), byte(2+i%n%250))}
}

// albedoNode is a node's address and token as its daemon.json says, read
// again when a dial or a hello is refused (a restarted daemon has a new
// token), at most every 50 ms by all the worker's connections together.
type albedoNode struct {
	home string
	cur  atomic.Pointer[client.Snapshot]
	mu   sync.Mutex
	read time.Time
}

func (n *albedoNode) snapshot() (client.Snapshot, error) {
	if s := n.cur.Load(); s != nil {
		return *s, nil
	}
	return n.refresh()
}

func (n *albedoNode) refresh() (client.Snapshot, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if s := n.cur.Load(); s != nil && time.Since(n.read) < 50*time.Millisecond {
		return *s, nil
	}
	info, err := client.ReadDaemonFile(n.home)
	if err != nil {
		return client.Snapshot{}, err
	}
	s := &client.Snapshot{PID: info.PID, Token: info.Token, Boot: info.Boot, BaseURL: "http://127.0.0.1:" + strconv.Itoa(info.Port)}
	n.cur.Store(s)
	n.read = time.Now()
	return *s, nil
}

// albedoCrowdConn is one crowd connection to albedo: it follows its
// sessions from their head and, when the connection is lost, dials again
// with the client library's backoff and resumes each from its last
// offset. Only its own goroutine touches its fields.
type albedoCrowdConn struct {
	node     *albedoNode
	idx      int
	sessions []string
	index    map[string]int // session → sub
	last     []int64
	epochs   []string
	dialer   *net.Dialer // dials from the connection's source address
	sink     crowdSink
	up       chan<- error // told once: nil at the first answered hello, or why the first attempt failed
	seen     bool         // the first hello is answered: last and epochs hold cursors
}

func newAlbedoCrowdConn(node *albedoNode, idx int, sessions []string, src *net.TCPAddr, sink crowdSink, up chan<- error) *albedoCrowdConn {
	c := &albedoCrowdConn{node: node, idx: idx, sessions: sessions, index: make(map[string]int, len(sessions)),
		last: make([]int64, len(sessions)), epochs: make([]string, len(sessions)), sink: sink, up: up}
	for i, s := range sessions {
		c.index[s] = i
	}
	c.dialer = &net.Dialer{LocalAddr: src, Timeout: 20 * time.Second}
	return c
}

func (c *albedoCrowdConn) run(ctx context.Context) {
	b := client.NewBackoff(client.BackoffOptions{})
	for tries := 1; ; tries++ {
		err := c.once(ctx)
		if ctx.Err() != nil {
			return
		}
		if !c.seen && (tries == firstTries || outOfFiles(err)) {
			c.up <- err // the first attempts failed: the worker counts it
			return
		}
		// A first attempt that failed otherwise goes again, as a
		// reconnect does: a busy machine may refuse a dial, or read a
		// hello late (the daemon closes one unread after 10 s).
		switch {
		case c.seen && err == nil:
			b.Reset()
		case c.seen:
			c.sink.failed(err)
		}
		t := time.NewTimer(b.Next())
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		c.node.refresh() // a restarted daemon has a new token
	}
}

// firstTries bounds the attempts of a connection's first hello: one that
// keeps failing is counted as failed, and the crowd goes on without it.
const firstTries = 5

// outOfFiles says err is the process's or the system's fd limit, which
// another attempt does not lift: the worker fails at once, naming it.
func outOfFiles(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// once dials, says hello with every sub and reads until the connection
// is lost; it returns nil if the hello was answered.
func (c *albedoCrowdConn) once(ctx context.Context) error {
	snap, err := c.node.snapshot()
	if err != nil {
		return err
	}
	zero := 0
	subs := make([]wire.Sub, len(c.sessions))
	for i, s := range c.sessions {
		subs[i] = wire.Sub{Session: s, Window: &zero}
		if c.seen {
			subs[i].After, subs[i].Epoch = &c.last[i], c.epochs[i]
		}
	}
	// The hello rides in the upgrade, as albedo's client sends it: the
	// daemon answers the 101 and the hello in one write.
	hello := wire.Encode(wire.Command{ID: 1, Op: wire.OpHello, Client: "albedo-bench-crowd/1", Subs: subs})
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	ws, err := leanDial(dctx, c.dialer, strings.TrimPrefix(snap.BaseURL, "http://"), "/v1/ws",
		"Authorization: Bearer "+snap.Token, "Sec-WebSocket-Protocol: "+wire.Subprotocol,
		wire.HelloHeader+": "+base64.RawURLEncoding.EncodeToString(hello))
	cancel()
	if err != nil {
		return err
	}
	defer ws.Close()
	defer context.AfterFunc(ctx, func() { ws.Close() })()
	if !ws.helloTaken {
		if err := ws.WriteText(hello); err != nil {
			return err
		}
	}
	answered := false
	var msg []byte
	for {
		msg, err = ws.Read(msg)
		if err != nil {
			if answered {
				return nil
			}
			return err
		}
		at := time.Now()
		for line := range bytes.SplitSeq(msg, []byte{'\n'}) {
			switch {
			case bytes.HasPrefix(line, []byte(`{"op":"event"`)):
				session, text, ok := eventFields(line)
				off, ook := rawInt(line, `"offset":`)
				if i, known := c.index[session]; ok && ook && known {
					c.last[i] = off
					c.sink.event(c.idx, i, off, text, at)
				}
			case bytes.HasPrefix(line, []byte(`{"id":1,`)):
				if err := c.helloReply(line); err != nil {
					return err
				}
				answered = true
			}
		}
	}
}

// helloReply reads the hello's answer: the cursors of a first hello, and
// the attachment of every one.
func (c *albedoCrowdConn) helloReply(line []byte) error {
	var r wire.Reply
	if err := json.Unmarshal(line, &r); err != nil {
		return err
	}
	if !r.OK || len(r.Subs) != len(c.sessions) {
		return fmt.Errorf("hello: %v", r.Error)
	}
	for i, s := range r.Subs {
		if !s.OK {
			return fmt.Errorf("sub %s: %v", s.Session, s.Error)
		}
		if !c.seen {
			c.last[i], c.epochs[i] = s.Head, s.Epoch
		}
	}
	if !c.seen {
		c.seen = true
		c.up <- nil
	}
	c.sink.attached(c.idx)
	return nil
}

// rawInt returns the decimal integer after the first key in line.
func rawInt(line []byte, key string) (int64, bool) {
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return 0, false
	}
	v := line[i+len(key):]
	n := 0
	for n < len(v) && '0' <= v[n] && v[n] <= '9' {
		n++
	}
	x, err := strconv.ParseInt(string(v[:n]), 10, 64)
	return x, err == nil
}

// cfCrowdConn is one crowd connection to centrifuge, through centrifuge-go
// with recoverable, positioned subscriptions: on a reconnect it asks for
// what it missed since its last offset.
func cfCrowdConn(ctx context.Context, url string, dialer *net.Dialer, idx int, channels []string, sink crowdSink) (func(), error) {
	c := centrifuge.NewJsonClient(url, centrifuge.Config{MaxReconnectDelay: 5 * time.Second, NetDialContext: dialer.DialContext})
	on := make([]atomic.Bool, len(channels))
	var subscribed atomic.Int64
	all := make(chan struct{})
	var once sync.Once
	for j, ch := range channels {
		sub, err := c.NewSubscription(ch, centrifuge.SubscriptionConfig{Recoverable: true, Positioned: true})
		if err != nil {
			c.Close()
			return nil, err
		}
		sub.OnPublication(func(e centrifuge.PublicationEvent) {
			var s string
			if json.Unmarshal(e.Data, &s) == nil {
				sink.event(idx, j, int64(e.Offset), s, time.Now())
			}
		})
		sub.OnSubscribed(func(centrifuge.SubscribedEvent) {
			if !on[j].Swap(true) && subscribed.Add(1) == int64(len(channels)) {
				once.Do(func() { close(all) })
				sink.attached(idx)
			}
		})
		sub.OnSubscribing(func(centrifuge.SubscribingEvent) {
			if on[j].Swap(false) {
				subscribed.Add(-1)
			}
		})
		if err := sub.Subscribe(); err != nil {
			c.Close()
			return nil, err
		}
	}
	if err := c.Connect(); err != nil {
		c.Close()
		return nil, err
	}
	select {
	case <-all:
		return c.Close, nil
	case <-ctx.Done():
		c.Close()
		return nil, ctx.Err()
	case <-time.After(60 * time.Second):
		c.Close()
		return nil, fmt.Errorf("centrifuge: subscribe timed out")
	}
}

// wsCrowdConn is one connection to the bare broadcast server: one
// implicit channel, no offsets (the event's offset is 0), no reattach. It
// reads through the same lean client as albedo's crowd.
func wsCrowdConn(ctx context.Context, url string, dialer *net.Dialer, idx int, sink crowdSink) (func(), error) {
	host, path, _ := strings.Cut(strings.TrimPrefix(url, "ws://"), "/")
	ws, err := leanDial(ctx, dialer, host, "/"+path)
	if err != nil {
		return nil, err
	}
	go func() {
		var m []byte
		var err error
		for {
			if m, err = ws.Read(m); err != nil {
				return
			}
			sink.event(idx, 0, 0, string(m), time.Now())
		}
	}()
	sink.attached(idx)
	return func() { ws.Close() }, nil
}
