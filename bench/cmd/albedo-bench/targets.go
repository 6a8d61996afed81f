package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/centrifugal/centrifuge-go"
	"github.com/coder/websocket"
	"github.com/google/uuid"

	"albedo/client"
	"albedo/wire"
)

// target is what a scenario drives: albedo, or a peer with its own protocol.
type target interface {
	// pids are the server's processes (a cluster's nodes), for CPU and RSS.
	pids() []int
	// channel makes (albedo: creates the session) or names a channel.
	channel(ctx context.Context, name string) (string, error)
	// viewer opens one connection subscribed to channels; onText gets the
	// text of every delivered message. It returns once subscribed.
	viewer(ctx context.Context, channels []string, onText func(channel, text string)) (func(), error)
	// publisher opens a connection whose publish returns once the server
	// has taken the message (albedo: committed).
	publisher(ctx context.Context) (func(ctx context.Context, channel, text string) error, func(), error)
	close()
}

func newTarget(ctx context.Context, c config) (target, error) {
	switch c.target {
	case "albedo":
		return newAlbedo(ctx, c)
	case "ws":
		return &wsTarget{url: c.url, serverPIDs: c.pids}, nil
	case "centrifuge":
		return &cfTarget{urls: strings.Split(c.url, ","), serverPIDs: c.pids}, nil
	case "jetstream":
		return &jsTarget{url: c.url, serverPIDs: c.pids}, nil
	}
	return nil, fmt.Errorf("unknown target %q", c.target)
}

// albedoTarget: viewers use the owner token of their node; the publisher
// is a bot posting (a message committed to the log, no turn). With
// several nodes (-homes) viewers go round-robin over them; everything
// else runs on the first.
type albedoTarget struct {
	home, bin string
	c         *client.Client
	snap      client.Snapshot
	nodes     []client.Snapshot // every node, the first being snap (but for restart)
	next      atomic.Int64      // the next viewer's node
	botToken  string
	epochs    sync.Map // session → epoch, for followers' cursors
}

func newAlbedo(ctx context.Context, cfg config) (*albedoTarget, error) {
	homes := cfg.homes
	if len(homes) == 0 {
		homes = []string{cfg.home}
	}
	var c0 *client.Client
	var nodes []client.Snapshot
	for _, h := range homes {
		c, err := client.New(client.Options{Home: h})
		if err != nil {
			return nil, err
		}
		snap, err := c.Discover(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", h, err)
		}
		if c0 == nil {
			c0 = c
		}
		nodes = append(nodes, snap)
	}
	bot, err := c0.AddBot(ctx, "bench-"+uuid.NewString()[:8], nil)
	if err != nil {
		return nil, err
	}
	return &albedoTarget{home: homes[0], bin: cfg.albedoBin, c: c0, snap: nodes[0], nodes: nodes, botToken: bot.Token}, nil
}

func (a *albedoTarget) pids() []int {
	pids := []int{a.snap.PID}
	for _, n := range a.nodes[1:] {
		pids = append(pids, n.PID)
	}
	return pids
}
func (a *albedoTarget) close() {}

func (a *albedoTarget) channel(ctx context.Context, name string) (string, error) {
	s, err := a.c.CreateSession(ctx, name, wire.SessionCreate{Title: "bench"})
	if err == nil {
		a.epochs.Store(s.ID, s.Epoch)
	}
	return s.ID, err
}

// follow is a client.Stream: the real reconnect, reattach and
// de-duplication logic every albedo client uses.
func (a *albedoTarget) follow(ctx context.Context, channels []string, onAttach func(int), onEvent func(int, int64)) (func(), error) {
	cl, err := client.New(client.Options{Home: a.home})
	if err != nil {
		return nil, err
	}
	// A hello carries every subscription: once it is answered, all of
	// this client's channels are attached.
	st := cl.Stream(client.StreamOptions{OnState: func(s client.State) {
		if s.Phase == client.Connected {
			for j := range channels {
				onAttach(j)
			}
		}
	}})
	for j, ch := range channels {
		epoch, _ := a.epochs.Load(ch)
		e, _ := epoch.(string)
		sub := st.Subscribe(ch, client.Cursor{Epoch: e})
		go func() {
			for {
				it, err := sub.Next(ctx)
				if err != nil {
					return
				}
				if it.Op == wire.PushEvent {
					onEvent(j, it.Event.Offset)
				}
			}
		}()
	}
	return func() { st.Close() }, nil
}

// restart stops the daemon (or SIGKILLs it and waits for it to be gone)
// and starts a new one the way every client does (client auto-start:
// detached, then probed until it answers).
func (a *albedoTarget) restart(ctx context.Context, kill bool, _ time.Duration) error {
	if kill {
		if err := syscall.Kill(a.snap.PID, syscall.SIGKILL); err != nil {
			return err
		}
		for client.ProcessAlive(a.snap.PID) {
			time.Sleep(5 * time.Millisecond) // no event says a process has gone
		}
	} else if out, err := exec.CommandContext(ctx, a.bin, "--home", a.home, "stop").CombinedOutput(); err != nil {
		return fmt.Errorf("stop: %w: %s", err, out)
	}
	c, err := client.New(client.Options{Home: a.home, AutoStart: true, Exe: a.bin})
	if err != nil {
		return err
	}
	snap, err := c.Discover(ctx)
	if err != nil {
		return err
	}
	a.c, a.snap = c, snap
	return nil
}

// rawConn is a minimal albedo websocket client: commands with replies,
// pushes to a callback.
type rawConn struct {
	ws      *websocket.Conn
	mu      sync.Mutex
	next    int64
	replies map[int64]chan wire.Reply
}

// dialAlbedo opens a raw connection. A dial the daemon turns away is tried
// again a few times: under a flood of new connections (a thousand clients
// reattaching at once) the daemon closes the oldest of those that have not
// sent their request yet (docs/protocol.md, "Connections without a
// token"), and a real client would try again too.
func dialAlbedo(ctx context.Context, snap client.Snapshot, token string, onPush func(line []byte)) (*rawConn, error) {
	var ws *websocket.Conn
	var err error
	for attempt := range 6 {
		ws, _, err = websocket.Dial(ctx, strings.Replace(snap.BaseURL, "http", "ws", 1)+"/v1/ws", &websocket.DialOptions{
			HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}, Subprotocols: []string{wire.Subprotocol}})
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Duration(20<<attempt) * time.Millisecond)
	}
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(-1)
	rc := &rawConn{ws: ws, replies: map[int64]chan wire.Reply{}}
	go func() {
		for {
			_, msg, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			for line := range bytes.SplitSeq(msg, []byte{'\n'}) {
				if bytes.HasPrefix(line, []byte(`{"op":`)) {
					if onPush != nil {
						onPush(line)
					}
					continue
				}
				var f wire.Reply
				if json.Unmarshal(line, &f) == nil {
					rc.mu.Lock()
					ch := rc.replies[f.ID]
					delete(rc.replies, f.ID)
					rc.mu.Unlock()
					if ch != nil {
						ch <- f
					}
				}
			}
		}
	}()
	return rc, nil
}

func (rc *rawConn) call(ctx context.Context, cmd wire.Command) (wire.Reply, error) {
	ch := make(chan wire.Reply, 1)
	rc.mu.Lock()
	rc.next++
	cmd.ID = rc.next
	rc.replies[cmd.ID] = ch
	rc.mu.Unlock()
	if err := rc.ws.Write(ctx, websocket.MessageText, wire.Encode(cmd)); err != nil {
		return wire.Reply{}, err
	}
	select {
	case f := <-ch:
		if !f.OK {
			return f, f.Error
		}
		return f, nil
	case <-ctx.Done():
		return wire.Reply{}, ctx.Err()
	}
}

func (a *albedoTarget) viewer(ctx context.Context, channels []string, onText func(string, string)) (func(), error) {
	node := a.snap
	if n := int64(len(a.nodes)); n > 1 {
		node = a.nodes[(a.next.Add(1)-1)%n]
	}
	rc, err := dialAlbedo(ctx, node, node.Token, func(line []byte) {
		if !bytes.HasPrefix(line, []byte(`{"op":"event"`)) {
			return
		}
		if session, text, ok := eventFields(line); ok {
			onText(session, text)
		}
	})
	if err != nil {
		return nil, err
	}
	zero := 0
	subs := make([]wire.Sub, len(channels))
	for i, ch := range channels {
		subs[i] = wire.Sub{Session: ch, Window: &zero}
	}
	if _, err := rc.call(ctx, wire.Command{Op: wire.OpHello, Client: "albedo-bench/1", Subs: subs}); err != nil {
		return nil, err
	}
	return func() { rc.ws.CloseNow() }, nil
}

func (a *albedoTarget) publisher(ctx context.Context) (func(context.Context, string, string) error, func(), error) {
	rc, err := dialAlbedo(ctx, a.snap, a.botToken, nil)
	if err != nil {
		return nil, nil, err
	}
	if _, err := rc.call(ctx, wire.Command{Op: wire.OpHello, Client: "albedo-bench-pub/1"}); err != nil {
		return nil, nil, err
	}
	pub := func(ctx context.Context, channel, text string) error {
		_, err := rc.call(ctx, wire.Command{Op: wire.OpPost, Session: channel, InputID: uuid.Must(uuid.NewV7()).String(), Text: text})
		return err
	}
	return pub, func() { rc.ws.CloseNow() }, nil
}

// wsTarget is the bare broadcast server: one implicit channel.
type wsTarget struct {
	url        string
	serverPIDs []int
}

func (w *wsTarget) pids() []int                                     { return w.serverPIDs }
func (w *wsTarget) close()                                          {}
func (w *wsTarget) channel(context.Context, string) (string, error) { return "all", nil }

func (w *wsTarget) viewer(ctx context.Context, _ []string, onText func(string, string)) (func(), error) {
	return wsRead(ctx, w.url, nil, func(m []byte) { onText("all", string(m)) })
}

// wsRead dials the bare broadcast server at url and hands each message it
// sends to on, from a goroutine of its own, until the returned close.
func wsRead(ctx context.Context, url string, opts *websocket.DialOptions, on func([]byte)) (func(), error) {
	c, _, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(-1)
	go func() {
		for {
			_, m, err := c.Read(context.Background())
			if err != nil {
				return
			}
			on(m)
		}
	}()
	return func() { c.CloseNow() }, nil
}

func (w *wsTarget) publisher(ctx context.Context) (func(context.Context, string, string) error, func(), error) {
	c, _, err := websocket.Dial(ctx, w.url, nil)
	if err != nil {
		return nil, nil, err
	}
	// The server sends the publisher its own copy too: that copy is the
	// acknowledgement, so a publisher waits for the server as it does on
	// albedo and centrifuge, instead of flooding a server that drops.
	acks := make(chan struct{}, 1<<16)
	go func() {
		for {
			if _, _, err := c.Read(context.Background()); err != nil {
				return
			}
			acks <- struct{}{}
		}
	}()
	var mu sync.Mutex
	pub := func(ctx context.Context, _, text string) error {
		mu.Lock()
		err := c.Write(ctx, websocket.MessageText, []byte(text))
		mu.Unlock()
		if err != nil {
			return err
		}
		select {
		case <-acks:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return pub, func() { c.CloseNow() }, nil
}

// cfTarget speaks centrifuge's own protocol through centrifuge-go. With
// several nodes (one broker) viewers go round-robin over them; publishers
// and everything else use the first.
type cfTarget struct {
	urls       []string
	next       atomic.Int64 // the next viewer's node
	serverPIDs []int
}

func (f *cfTarget) pids() []int                                            { return f.serverPIDs }
func (f *cfTarget) close()                                                 {}
func (f *cfTarget) channel(_ context.Context, name string) (string, error) { return name, nil }

func (f *cfTarget) connect(ctx context.Context) (*centrifuge.Client, error) {
	return f.connectTo(ctx, f.urls[0])
}

func (f *cfTarget) connectTo(ctx context.Context, url string) (*centrifuge.Client, error) {
	// The cap of albedo's contract (5 s) instead of centrifuge-go's 20 s;
	// the first delay stays centrifuge-go's own (200 ms).
	c := centrifuge.NewJsonClient(url, centrifuge.Config{MaxReconnectDelay: 5 * time.Second})
	up := make(chan struct{})
	var once sync.Once
	c.OnConnected(func(centrifuge.ConnectedEvent) { once.Do(func() { close(up) }) })
	if err := c.Connect(); err != nil {
		return nil, err
	}
	select {
	case <-up:
		return c, nil
	case <-ctx.Done():
		c.Close()
		return nil, ctx.Err()
	case <-time.After(10 * time.Second):
		c.Close()
		return nil, fmt.Errorf("centrifuge: connect timed out")
	}
}

func (f *cfTarget) viewer(ctx context.Context, channels []string, onText func(string, string)) (func(), error) {
	url := f.urls[(f.next.Add(1)-1)%int64(len(f.urls))]
	c, err := f.connectTo(ctx, url)
	if err != nil {
		return nil, err
	}
	err = subscribeAll(c, channels, func(j int, e centrifuge.PublicationEvent) {
		var s string
		if json.Unmarshal(e.Data, &s) == nil {
			onText(channels[j], s)
		}
	}, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	return c.Close, nil
}

// subscribeAll subscribes c to channels (recoverable, positioned) and
// returns once each has been subscribed; onAttach (if set) is called every
// time a channel is subscribed, again after a reconnect too.
func subscribeAll(c *centrifuge.Client, channels []string, onPub func(int, centrifuge.PublicationEvent), onAttach func(int)) error {
	var pending atomic.Int64
	pending.Store(int64(len(channels)))
	all := make(chan struct{})
	for j, ch := range channels {
		sub, err := c.NewSubscription(ch, centrifuge.SubscriptionConfig{Recoverable: true, Positioned: true})
		if err != nil {
			return err
		}
		sub.OnPublication(func(e centrifuge.PublicationEvent) { onPub(j, e) })
		var once sync.Once
		sub.OnSubscribed(func(centrifuge.SubscribedEvent) {
			if onAttach != nil {
				onAttach(j)
			}
			once.Do(func() {
				if pending.Add(-1) == 0 {
					close(all)
				}
			})
		})
		if err := sub.Subscribe(); err != nil {
			return err
		}
	}
	select {
	case <-all:
		return nil
	case <-time.After(20 * time.Second):
		return fmt.Errorf("centrifuge: subscribe timed out")
	}
}

func (f *cfTarget) publisher(ctx context.Context) (func(context.Context, string, string) error, func(), error) {
	c, err := f.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	pub := func(ctx context.Context, channel, text string) error {
		b := wire.Encode(text)
		_, err := c.Publish(ctx, channel, b)
		return err
	}
	return pub, func() { c.Close() }, nil
}

// follow is a centrifuge-go client with recoverable subscriptions: on a
// reconnect it asks for what it missed since its last offset.
func (f *cfTarget) follow(ctx context.Context, channels []string, onAttach func(int), onEvent func(int, int64)) (func(), error) {
	c, err := f.connect(ctx)
	if err != nil {
		return nil, err
	}
	err = subscribeAll(c, channels, func(j int, e centrifuge.PublicationEvent) { onEvent(j, int64(e.Offset)) }, onAttach)
	if err != nil {
		c.Close()
		return nil, err
	}
	return c.Close, nil
}

// restart asks the peer for an outage: it disconnects every client (with
// centrifuge's "reconnect" code) and refuses new connections for down,
// keeping its process and so its history. There is no kill variant: a
// killed centrifuge has no history left to recover from.
func (f *cfTarget) restart(ctx context.Context, kill bool, down time.Duration) error {
	if kill {
		return fmt.Errorf("centrifuge: no kill variant (its history dies with the process)")
	}
	u := strings.Replace(strings.Replace(f.urls[0], "ws://", "http://", 1), "/connection/websocket", "/bench/outage", 1)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("%s?for=%s", u, down), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("centrifuge outage: %s", resp.Status)
	}
	return nil
}
