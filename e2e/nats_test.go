//go:build !e2e_only || e2e_cluster

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
	natsserver "github.com/nats-io/nats-server/v2/server"

	"albedo/client"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// startNATS runs a NATS server in the test process on port (-1: any) and
// returns it; it is shut down when the test ends.
func startNATS(t *testing.T, port int) *natsserver.Server {
	t.Helper()
	skipShort(t, "NATS")
	s, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS did not start")
	}
	t.Cleanup(s.Shutdown)
	return s
}

// startNATSCluster starts n nodes on one database and one NATS.
func startNATSCluster(t *testing.T, n int) (*cluster, *natsserver.Server) {
	t.Helper()
	ns := startNATS(t, -1)
	cl := startClusterOn(t, clusterDatabase(t, n), n, 2*time.Second, "--nats", ns.ClientURL())
	return cl, ns
}

// watcher follows sessions through one node's stream and keeps, per
// session, the raw events it was given, failing on a gap, a duplicate or
// a reset.
type watcher struct {
	t    *testing.T
	node string
	mu   sync.Mutex
	got  map[string][]string // session → event JSON, in order
	errs []string
}

func watch(t *testing.T, ctx context.Context, nd *node, epochs map[string]string) *watcher {
	return watchWith(t, ctx, nd.c, nd.name, epochs)
}

// watchWith is watch through any client (a balancer's, say), named name.
func watchWith(t *testing.T, ctx context.Context, c *client.Client, name string, epochs map[string]string) *watcher {
	w := &watcher{t: t, node: name, got: map[string][]string{}}
	st := c.Stream(client.StreamOptions{})
	t.Cleanup(func() { st.Close() })
	for id, epoch := range epochs {
		sub := st.Subscribe(id, client.Cursor{Epoch: epoch})
		go func() {
			for {
				it, err := sub.Next(ctx)
				if err != nil {
					return
				}
				switch it.Op {
				case wire.PushReset:
					w.fail("%s: a reset (%s) on %s", id, it.Reset.Reason, name)
				case wire.PushEvent:
					var f struct {
						Event json.RawMessage `json:"event"`
					}
					_ = json.Unmarshal(it.Raw, &f)
					w.mu.Lock()
					if want := int64(len(w.got[id]) + 1); it.Event.Offset != want {
						w.errs = append(w.errs, fmt.Sprintf("%s on %s: offset %d where %d was next", id, name, it.Event.Offset, want))
					}
					w.got[id] = append(w.got[id], string(f.Event))
					w.mu.Unlock()
				}
			}
		}()
	}
	return w
}

func (w *watcher) fail(format string, args ...any) {
	w.mu.Lock()
	w.errs = append(w.errs, fmt.Sprintf(format, args...))
	w.mu.Unlock()
}

// has says whether the watcher has n events of session, after checking
// it saw nothing wrong.
func (w *watcher) has(session string, n int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.errs) > 0 {
		w.t.Fatalf("viewer on %s: %s", w.node, strings.Join(w.errs, "; "))
	}
	return len(w.got[session]) >= n
}

// pageEvents returns a session's events as GET …/events answers them to
// a node's owner, one raw JSON each.
func pageEvents(t *testing.T, nd *node, session string) []string {
	t.Helper()
	var out []string
	if err := nd.c.AllEvents(ctxT(t), session, func(raw json.RawMessage, _ wire.Event) error {
		out = append(out, string(raw))
		return nil
	}); err != nil {
		t.Fatalf("history of %s on %s: %v", session, nd.name, err)
	}
	return out
}

// sendThroughAll sends each node's share of inputs to every session at
// once and returns when all have receipts.
func sendThroughAll(t *testing.T, ctx context.Context, cl *cluster, ids []string, each int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(cl.nodes)*len(ids))
	for _, nd := range cl.nodes {
		for _, id := range ids {
			wg.Go(func() {
				for i := range each {
					if _, err := nd.c.PutInput(ctx, id, uuid.Must(uuid.NewV7()).String(), fmt.Sprintf("%s via %s #%d", id, nd.name, i)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// everyViewerSeesTheLog waits until every watcher has every session's
// whole log, then checks it is GET …/events' byte for byte.
func everyViewerSeesTheLog(t *testing.T, ctx context.Context, cl *cluster, ws []*watcher, ids []string, turns int, within time.Duration) {
	t.Helper()
	for _, id := range ids {
		waitTurnsClosed(t, ctx, cl.nodes[0].c, id, turns)
	}
	deadline := time.Now().Add(within)
	for _, id := range ids {
		want := pageEvents(t, cl.nodes[0], id)
		for _, w := range ws {
			for !w.has(id, len(want)) {
				if time.Now().After(deadline) {
					w.mu.Lock()
					n := len(w.got[id])
					w.mu.Unlock()
					t.Fatalf("%s: the viewer on %s has %d of %d events %v after the last commit", id, w.node, n, len(want), within)
				}
				time.Sleep(20 * time.Millisecond) // polling a condition under a deadline
			}
			w.mu.Lock()
			got := w.got[id]
			w.mu.Unlock()
			if len(got) != len(want) {
				t.Fatalf("%s: the viewer on %s has %d events, the log %d", id, w.node, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s: event %d on %s differs from GET …/events:\n%s\n%s", id, i+1, w.node, got[i], want[i])
				}
			}
		}
	}
}

// clusterSessions creates n sessions through the nodes in turn and
// returns their ids and epochs.
func clusterSessions(t *testing.T, ctx context.Context, cl *cluster, prefix string, n int) ([]string, map[string]string) {
	t.Helper()
	var ids []string
	epochs := map[string]string{}
	for i := range n {
		s, err := cl.nodes[i%len(cl.nodes)].c.CreateSession(ctx, fmt.Sprintf("%s%02d", prefix, i), wire.SessionCreate{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
		epochs[s.ID] = s.Epoch
	}
	return ids, epochs
}

// Viewers on all three nodes watch the same 20 sessions while inputs come
// through every node: each sees every event once, in order, byte for
// byte what GET …/events answers.
func TestClusterViewersOnEveryNodeSeeEveryEvent(t *testing.T) {
	parallelHeavy(t)
	cl, _ := startNATSCluster(t, 3)
	ctx := ctxT(t)
	ids, epochs := clusterSessions(t, ctx, cl, "v", 20)
	var ws []*watcher
	for _, nd := range cl.nodes {
		for range 2 {
			ws = append(ws, watch(t, ctx, nd, epochs))
		}
	}
	sendThroughAll(t, ctx, cl, ids, 5)
	// Notices carry the events; the bound leaves room for a loaded machine.
	everyViewerSeesTheLog(t, ctx, cl, ws, ids, 15, 5*time.Second)
}

// NATS stops for 5 s while inputs come through every node, then starts
// again: nothing is lost or duplicated, and viewers are caught up within
// the reconcile interval.
func TestClusterRidesOutANATSOutage(t *testing.T) {
	parallelHeavy(t)
	cl, ns := startNATSCluster(t, 3)
	ctx := ctxT(t)
	ids, epochs := clusterSessions(t, ctx, cl, "n", 6)
	var ws []*watcher
	for _, nd := range cl.nodes {
		ws = append(ws, watch(t, ctx, nd, epochs))
	}
	port := ns.Addr().(*net.TCPAddr).Port
	// Inputs at a steady pace through every node, before, during and
	// after the outage.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	sent := map[string]int{}
	for _, nd := range cl.nodes {
		for _, id := range ids {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond): // the pace of the load
					}
					if _, err := nd.c.PutInput(ctx, id, uuid.Must(uuid.NewV7()).String(), fmt.Sprintf("%s via %s #%d", id, nd.name, i)); err != nil {
						t.Errorf("input: %v", err)
						return
					}
					mu.Lock()
					sent[id]++
					mu.Unlock()
				}
			})
		}
	}
	time.Sleep(time.Second) // load before the outage
	ns.Shutdown()
	ns.WaitForShutdown()
	time.Sleep(5 * time.Second) // the outage itself
	startNATS(t, port)
	time.Sleep(time.Second) // load after it
	close(stop)
	wg.Wait()
	if t.Failed() {
		return
	}
	// The heartbeat re-reads heads every 2 s, NATS or not: caught up
	// within a few of them (on a loaded machine; usually within one).
	for _, id := range ids {
		everyViewerSeesTheLog(t, ctx, cl, ws, []string{id}, sent[id], 6*time.Second)
	}
}

// cutter is a TCP proxy playing a load balancer: each new connection goes
// to a random node that answers, and, with an interval, every connection
// is cut that often.
type cutter struct {
	ln    net.Listener
	ports []int
	mu    sync.Mutex
	conns []net.Conn
	last  int // the node port the newest connection went to
	// inOrder sends each connection to the first node that answers,
	// in the order of ports, instead of a random one.
	inOrder bool
}

func startCutter(t *testing.T, ports []int, every time.Duration) *cutter {
	return startBalancer(t, ports, every, false)
}

// startBalancer is startCutter, with each connection going to the first
// node that answers when inOrder.
func startBalancer(t *testing.T, ports []int, every time.Duration, inOrder bool) *cutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{ln: ln, ports: ports, inOrder: inOrder}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close(); c.cut() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			var out net.Conn
			order := rand.Perm(len(ports))
			if c.inOrder {
				order = order[:0]
				for i := range ports {
					order = append(order, i)
				}
			}
			for _, i := range order {
				if out, err = net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", ports[i])); err == nil {
					c.mu.Lock()
					c.last = ports[i]
					c.mu.Unlock()
					break
				}
			}
			if out == nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	if every <= 0 {
		return c
	}
	go func() {
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				c.cut()
			}
		}
	}()
	return c
}

func (c *cutter) cut() {
	c.mu.Lock()
	conns := c.conns
	c.conns = nil
	c.mu.Unlock()
	for _, x := range conns {
		x.Close()
	}
}

func (c *cutter) port() int { return c.ln.Addr().(*net.TCPAddr).Port }

// A client whose connection is cut every 200 ms and sent to a random node
// reattaches each time with recovered: true, never "reset: ahead", and
// sees the log with no gap or duplicate. It
// speaks the protocol itself, with a viewer token made on one node (which
// the others learn from the store).
func TestClusterReattachesAcrossNodes(t *testing.T) {
	parallelLong(t)
	cl, _ := startNATSCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), clusterCutFor+time.Minute)
	defer cancel()
	ids, epochs := clusterSessions(t, ctx, cl, "x", 1)
	id := ids[0]
	share, err := cl.nodes[0].c.Share(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var ports []int
	for _, nd := range cl.nodes {
		info, err := client.ReadDaemonFile(nd.home)
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, info.Port)
	}
	proxy := startCutter(t, ports, 200*time.Millisecond)
	// Inputs keep coming through node 0 meanwhile.
	stop := make(chan struct{})
	writing := make(chan struct{})
	go func() {
		defer close(writing)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := cl.nodes[i%3].c.PutInput(ctx, id, uuid.Must(uuid.NewV7()).String(), "tick "+strconv.Itoa(i)); err != nil {
				t.Errorf("input: %v", err)
				return
			}
			time.Sleep(20 * time.Millisecond) // a steady rate of inputs
		}
	}()
	var after int64
	attaches := 0
	until := time.Now().Add(clusterCutFor)
	for time.Now().Before(until) {
		if attachOnce(t, ctx, proxy.port(), share.Token, id, epochs[id], &after) {
			attaches++
		}
	}
	close(stop)
	<-writing
	if attaches == 0 {
		t.Fatal("no connection lived long enough for its hello's reply")
	}
	// Catch up to the end, then compare.
	want := pageEvents(t, cl.nodes[1], id)
	for after < int64(len(want)) {
		if ctx.Err() != nil {
			t.Fatalf("caught up to %d of %d events", after, len(want))
		}
		attachOnce(t, ctx, proxy.port(), share.Token, id, epochs[id], &after)
	}
	t.Logf("%d attachments, all recovered; %d events", attaches, after)
}

// clusterCutFor is how long TestClusterReattachesAcrossNodes cuts.
const clusterCutFor = 30 * time.Second

// attachOnce connects through the proxy, says hello with the cursor,
// checks the reply (recovered, or the test fails) and the events until
// the connection is cut, and says whether it got as far as the reply: a
// connection cut before is no attachment.
func attachOnce(t *testing.T, ctx context.Context, port int, token, session, epoch string, after *int64) (attached bool) {
	t.Helper()
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(dctx, fmt.Sprintf("ws://127.0.0.1:%d/v1/ws", port), &websocket.DialOptions{
		HTTPHeader:   http.Header{"Origin": {fmt.Sprintf("http://127.0.0.1:%d", port)}},
		Subprotocols: []string{"albedo.v1"},
	})
	if err != nil {
		return false // cut before it opened
	}
	defer c.CloseNow()
	c.SetReadLimit(wire.MaxFrameBytes)
	a := *after
	hello, _ := json.Marshal(wire.Command{ID: 1, Op: wire.OpHello, Token: token, Client: "cutter", Subs: []wire.Sub{{Session: session, Epoch: epoch, After: &a}}})
	if c.Write(ctx, websocket.MessageText, hello) != nil {
		return false
	}
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return attached
		}
		for _, line := range strings.Split(string(data), "\n") {
			var f wire.Frame
			if err := json.Unmarshal([]byte(line), &f); err != nil {
				t.Fatalf("frame %q: %v", line, err)
			}
			switch {
			case f.Reply != nil && f.Reply.ID == 1:
				if !f.Reply.OK || len(f.Reply.Subs) != 1 {
					t.Fatalf("hello: %+v", f.Reply)
				}
				attached = true
				if !f.Reply.Subs[0].Recovered {
					t.Fatalf("attached at %d on a node whose head is %d: not recovered", a, f.Reply.Subs[0].Head)
				}
			case f.Op == wire.PushReset:
				t.Fatalf("a reset (%s) at %d", f.Reset.Reason, *after)
			case f.Op == wire.PushEvent:
				if f.Event.Offset != *after+1 {
					t.Fatalf("offset %d after %d: a gap or a duplicate", f.Event.Offset, *after)
				}
				*after = f.Event.Offset
			}
		}
	}
}

// Viewers on each node are in every node's presence, and a SIGKILLed
// node's viewers leave it within the TTL.
func TestClusterPresenceSpansNodes(t *testing.T) {
	parallel(t)
	cl, _ := startNATSCluster(t, 3)
	ctx := ctxT(t)
	ids, epochs := clusterSessions(t, ctx, cl, "p", 1)
	id := ids[0]
	for _, nd := range cl.nodes {
		st := nd.c.Stream(client.StreamOptions{})
		t.Cleanup(func() { st.Close() })
		st.Subscribe(id, client.Cursor{Epoch: epochs[id]})
	}
	viewers := func(nd *node) int {
		st, err := nd.c.Status(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return st.Viewers
	}
	waitFor := func(what string, within time.Duration, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(within)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v", what, within)
			}
			time.Sleep(50 * time.Millisecond) // polling under a deadline
		}
	}
	for _, nd := range cl.nodes {
		waitFor("3 viewers on "+nd.name, 5*time.Second, func() bool { return viewers(nd) == 3 })
	}
	killed := time.Now()
	cl.nodes[2].d.kill()
	for _, nd := range cl.nodes[:2] {
		// What a node said lasts 6 s (3 heartbeats) unrepeated; it is
		// looked at every heartbeat.
		waitFor("2 viewers on "+nd.name, 10*time.Second, func() bool { return viewers(nd) == 2 })
	}
	t.Logf("the killed node's viewer left after %v", time.Since(killed).Round(time.Millisecond))
}

// An interrupt sent to node B for a turn running on node A is answered
// once the interrupted message is committed; a viewer token revoked on A
// closes its sockets on B with 4401; bot and viewer tokens made on A work
// on B; and on a node not running the turn, the partial text plus the
// deltas equal the committed message.
func TestClusterTurnsAndTokensAcrossNodes(t *testing.T) {
	parallel(t)
	cl, _ := startNATSCluster(t, 2)
	ctx := ctxT(t)
	a, b := cl.nodes[0], cl.nodes[1]
	s, err := a.c.CreateSession(ctx, "turns", wire.SessionCreate{Provider: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	// A viewer on B follows a turn that streams on A. It also lists
	// sessions: it hears of those made and deleted on A (at the end).
	told := make(chan struct{}, 1)
	st := b.c.Stream(client.StreamOptions{OnSessions: func() {
		select {
		case told <- struct{}{}:
		default:
		}
	}})
	defer st.Close()
	sub := st.Subscribe(s.ID, client.Cursor{Epoch: s.Epoch})
	chunks := []string{"one ", "two ", "three ", "four"}
	// The turn is held open until B's viewer has been shown the whole
	// text: text still unsent when the closing event lands is dropped
	// (docs/protocol.md), so only then is "streamed == committed" owed.
	release := make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	cl.fake.Push(fakeopenai.Reply{Chunks: chunks, Pace: 150 * time.Millisecond, Block: release})
	if _, err := a.c.PutInput(ctx, s.ID, uuid.Must(uuid.NewV7()).String(), "count"); err != nil {
		t.Fatal(err)
	}
	var text, turn string
	for {
		if !released && text == strings.Join(chunks, "") {
			close(release)
			released = true
		}
		it, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		switch it.Op {
		case wire.PushPartial:
			turn, text = it.Text.TurnID, it.Text.Text
		case wire.PushDelta:
			if it.Text.TurnID == turn || turn == "" {
				turn, text = it.Text.TurnID, text+it.Text.Text
			}
		}
		if it.Op == wire.PushEvent && it.Event.Type == wire.EventMessage && it.Event.Role == wire.RoleAssistant {
			if it.Event.Text != text || text != strings.Join(chunks, "") {
				t.Fatalf("on the other node the streamed text was %q, the committed message %q", text, it.Event.Text)
			}
			break
		}
	}
	// The completed turn titles its untitled session, a settings change
	// made after it: the PATCH below would race it for the version.
	for {
		it, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if it.Op == wire.PushEvent && it.Event.Type == wire.EventSettings && it.Event.Title != nil {
			break
		}
	}

	// An interrupt through B of a turn running on A.
	block := make(chan struct{})
	defer close(block)
	cl.fake.Push(fakeopenai.Reply{Chunks: []string{"long "}, Block: block})
	if _, err := a.c.PutInput(ctx, s.ID, uuid.Must(uuid.NewV7()).String(), "go on"); err != nil {
		t.Fatal(err)
	}
	for {
		it, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if it.Op == wire.PushDelta || it.Op == wire.PushPartial {
			break
		}
	}
	r, err := b.c.Interrupt(ctx, s.ID)
	if err != nil || !r.Interrupted {
		t.Fatalf("interrupt through the other node: %+v %v", r, err)
	}
	evs := events(t, ctx, b.c, s.ID)
	last := evs[len(evs)-1]
	if last.Type != wire.EventTurn || last.State != wire.TurnInterrupted || last.TurnID != r.TurnID {
		t.Fatalf("the interrupt was answered before its turn was committed: the log ends with %+v", last)
	}

	// Settings changed through A reach B's status pushes.
	cur, err := a.c.Session(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	model := "other-model"
	if _, err := a.c.PatchSession(ctx, s.ID, cur.ETag, wire.SessionPatch{Model: &model}); err != nil {
		t.Fatal(err)
	}
	for {
		it, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if it.Op == wire.PushStatus && it.Status.Model == model {
			break
		}
	}

	// Tokens made on A work on B; one revoked on A closes its socket on B.
	bot, err := a.c.AddBot(ctx, "crossing", nil)
	if err != nil {
		t.Fatal(err)
	}
	share, err := a.c.Share(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	infoB, err := client.ReadDaemonFile(b.home)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(token string) *websocket.Conn {
		c, _, err := websocket.Dial(ctx, fmt.Sprintf("ws://127.0.0.1:%d/v1/ws", infoB.Port), &websocket.DialOptions{
			HTTPHeader:   http.Header{"Origin": {fmt.Sprintf("http://127.0.0.1:%d", infoB.Port)}},
			Subprotocols: []string{"albedo.v1"},
		})
		if err != nil {
			t.Fatal(err)
		}
		hello, _ := json.Marshal(wire.Command{ID: 1, Op: wire.OpHello, Token: token, Client: "t", Subs: []wire.Sub{{Session: s.ID}}})
		if err := c.Write(ctx, websocket.MessageText, hello); err != nil {
			t.Fatal(err)
		}
		_, data, err := c.Read(ctx)
		if err != nil || !strings.Contains(string(data), `"ok":true`) {
			t.Fatalf("hello on the other node with a token made on the first: %s %v", data, err)
		}
		return c
	}
	conn(bot.Token).CloseNow()
	viewer := conn(share.Token)
	if err := a.c.Unshare(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	for {
		_, _, err := viewer.Read(ctx)
		if err != nil {
			if code := websocket.CloseStatus(err); code != wire.CloseBadToken {
				t.Fatalf("the revoked viewer's socket on the other node ended with %v (%d), not 4401", err, code)
			}
			break
		}
	}

	// A member made on A: a grant on A lets them in on B, its revocation
	// on A ends their subscription on B, their removal closes them there.
	ann, err := a.c.AddMember(ctx, "ann", false)
	if err != nil {
		t.Fatal(err)
	}
	member := conn(ann.Token)
	frames := func(keep func(wire.Frame) bool) wire.Frame {
		for {
			_, data, err := member.Read(ctx)
			if err != nil {
				t.Fatalf("the member's socket on the other node: %v", err)
			}
			for line := range strings.SplitSeq(string(data), "\n") {
				f, err := wire.DecodeFrame([]byte(line))
				if err == nil && keep(f) {
					return f
				}
			}
		}
	}
	if err := a.c.Grant(ctx, s.ID, "ann", wire.AccessRead); err != nil {
		t.Fatal(err)
	}
	for id := int64(2); ; id++ { // B hears of the grant by notice: ask until it has
		sub, _ := json.Marshal(wire.Command{ID: id, Op: wire.OpSub, Session: s.ID})
		if err := member.Write(ctx, websocket.MessageText, sub); err != nil {
			t.Fatal(err)
		}
		if r := frames(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == id }); r.Reply.OK {
			break
		}
	}
	if err := a.c.Ungrant(ctx, s.ID, "ann"); err != nil {
		t.Fatal(err)
	}
	frames(func(f wire.Frame) bool { return f.Op == wire.PushReset && f.Reset.Reason == wire.ResetRevoked })
	if err := a.c.RemoveMember(ctx, "ann"); err != nil {
		t.Fatal(err)
	}
	for {
		_, _, err := member.Read(ctx)
		if err != nil {
			if code := websocket.CloseStatus(err); code != wire.CloseBadToken {
				t.Fatalf("the removed member's socket on the other node ended with %v (%d), not 4401", err, code)
			}
			break
		}
	}

	// B's stream is told of a session made on A, and of its deletion.
	for _, change := range []func() error{
		func() error { _, err := a.c.CreateSession(ctx, "made-on-a", wire.SessionCreate{}); return err },
		func() error { return a.c.DeleteSession(ctx, "made-on-a") },
	} {
		select {
		case <-told: // earlier changes
		default:
		}
		if err := change(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-told:
		case <-time.After(10 * time.Second):
			t.Fatal("the other node's listener was not told of a session made or deleted")
		}
	}
}

// A node's /readyz says whether it hears the other nodes (NATS), staying
// ready without them, and its /metrics how late their notices arrive.
func TestClusterReadinessFollowsNATS(t *testing.T) {
	parallel(t)
	ns := startNATS(t, -1)
	cl := startClusterOn(t, clusterDatabase(t, 2), 2, 2*time.Second, "--nats", ns.ClientURL(), "--metrics-addr", "127.0.0.1:0")
	ctx := ctxT(t)
	var metricsAddr string
	for _, line := range strings.Split(cl.nodes[0].d.logText(), "\n") {
		if strings.Contains(line, "metrics listening") {
			_, rest, _ := strings.Cut(line, "addr=")
			metricsAddr, _, _ = strings.Cut(rest, " ")
		}
	}
	if metricsAddr == "" {
		t.Fatalf("no metrics address in the log:\n%s", cl.nodes[0].d.logText())
	}
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + metricsAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	waitReady := func(want int, has string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			code, body := get("/readyz")
			if code == want && strings.Contains(body, has) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz: %d %s; want %d with %q", code, body, want, has)
			}
			time.Sleep(50 * time.Millisecond) // polling under a deadline
		}
	}
	waitReady(200, `"nats":"ok"`)
	checkBuild(t, get)
	s, err := cl.nodes[1].c.CreateSession(ctx, "lag", wire.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.nodes[1].c.PutInput(ctx, s.ID, uuid.Must(uuid.NewV7()).String(), "hello"); err != nil {
		t.Fatal(err)
	}
	waitTurnsClosed(t, ctx, cl.nodes[1].c, s.ID, 1)
	if _, body := get("/metrics"); !strings.Contains(body, "\nalbedo_nats_lag_seconds_count{peer=") {
		t.Fatalf("/metrics has no NATS lag:\n%s", body)
	}
	if _, body := get("/metrics"); !strings.Contains(body, "\nalbedo_nats_connected 1") {
		t.Fatalf("/metrics does not say NATS is connected:\n%s", body)
	}
	// What an operator alerts on.
	if _, err := cl.nodes[0].c.Sessions(ctx); err != nil {
		t.Fatal(err)
	}
	if code := statusWith(t, cl.nodes[0], cl.nodes[0].c.Snapshot().Token, "/v1/sessions/no-such-session"); code != 404 {
		t.Fatalf("a missing session: %d", code)
	}
	_, body := get("/metrics")
	for _, want := range []string{
		`albedo_errors_total{code="not_found"} 1`, "\nalbedo_ready 1", `albedo_nats_peer_silence_seconds{peer="node-1"}`,
		"\nalbedo_lease_takeovers_total 0", "\nalbedo_clock_skew_seconds ", `go_sql_in_use_connections{db_name="albedo"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
	// NATS away: the node stays ready (the store is all inputs, turns and
	// history need), says so among its checks, and in its metric; inputs
	// still work.
	port := ns.Addr().(*net.TCPAddr).Port
	ns.Shutdown()
	ns.WaitForShutdown()
	waitReady(200, `"nats":"failing"`)
	if _, body := get("/metrics"); !strings.Contains(body, "\nalbedo_nats_connected 0") {
		t.Fatalf("/metrics does not say NATS is away:\n%s", body)
	}
	if _, err := cl.nodes[0].c.PutInput(ctx, s.ID, uuid.Must(uuid.NewV7()).String(), "while NATS is away"); err != nil {
		t.Fatal(err)
	}
	startNATS(t, port)
	waitReady(200, `"nats":"ok"`)
}

// The terminal, pointed at a load balancer with ALBEDO_URL and an owner
// token made by command, follows its session while the node behind it is
// killed: it reconnects through the balancer to another node, and every
// reply shows once.
func TestClusterTerminalSurvivesItsNode(t *testing.T) {
	parallel(t)
	cl, _ := startNATSCluster(t, 2)
	ctx := ctxT(t)
	out := cli(t, cl.nodes[0].home, "tokens", "add", "--role", "owner", "tmux", "--db", cl.url)
	var token string
	for _, w := range strings.Fields(out) {
		if strings.HasPrefix(w, "alown_") {
			token = w
		}
	}
	if token == "" {
		t.Fatalf("no token in %q", out)
	}
	var ports []int
	byPort := map[int]*node{}
	for _, nd := range cl.nodes {
		info, err := client.ReadDaemonFile(nd.home)
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, info.Port)
		byPort[info.Port] = nd
	}
	// Every connection to node 0 while it answers, then to node 1.
	lb := startBalancer(t, ports, 0, true)
	empty := t.TempDir()
	x := startTmuxEnv(t, fmt.Sprintf("ALBEDO_HOME=%s ALBEDO_URL=http://127.0.0.1:%d ALBEDO_TOKEN=%s", empty, lb.port(), token), 100, 30)
	x.waitPane("a connected status bar", has(" connected"))
	x.keys("C-n")
	x.waitPane("the composer of a new session", has("message · /help"))
	x.keys("first prompt", "Enter")
	x.waitPane("the first reply", has("echo: first prompt"))
	// Shown is not committed: the pane shows the reply as it streams, and
	// a node killed before its commit leaves the turn interrupted.
	first, err := cl.nodes[0].c.Sessions(ctx)
	if err != nil || len(first) != 1 {
		t.Fatalf("sessions: %v %v", first, err)
	}
	waitTurnsClosed(t, ctx, cl.nodes[0].c, first[0].ID, 1)

	lb.mu.Lock()
	behind := byPort[lb.last]
	lb.mu.Unlock()
	if behind != cl.nodes[0] {
		t.Fatalf("the terminal went to %s, not to the first node", behind.name)
	}
	behind.d.kill()
	other := cl.nodes[1]
	x.waitPane("a connected status bar again", has(" connected"))
	ss, err := other.c.Sessions(ctx)
	if err != nil || len(ss) != 1 {
		t.Fatalf("sessions: %v %v", ss, err)
	}
	if _, err := other.c.PutInput(ctx, ss[0].ID, uuid.Must(uuid.NewV7()).String(), "from outside"); err != nil {
		t.Fatal(err)
	}
	x.waitPane("the reply to an input from outside", has("echo: from outside"))
	x.keys("second prompt", "Enter")
	pane := x.waitPane("the second reply", has("echo: second prompt"))
	for _, reply := range []string{"echo: first prompt", "echo: from outside", "echo: second prompt"} {
		if n := strings.Count(pane, reply); n != 1 {
			t.Fatalf("%q shown %d times:\n%s", reply, n, pane)
		}
	}
	x.keys("C-q")
	assertEmptyDir(t, empty)
}

// A bot connected to one node serves the turns another node runs: the
// example bot, pointed at node B with --url, answers a session whose turn
// runs on node A; killed mid-turn and started again on node A, it
// completes the turn, which starts over: the example bot works against
// a cluster.
func TestClusterBotServesAnotherNodesTurns(t *testing.T) {
	parallel(t)
	cl, _ := startNATSCluster(t, 2)
	ctx := ctxT(t)
	a, b := cl.nodes[0], cl.nodes[1]
	bot, err := a.c.AddBot(ctx, "example", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.c.CreateSession(ctx, "bot", wire.SessionCreate{Provider: "bot:example"})
	if err != nil {
		t.Fatal(err)
	}
	st := a.c.Stream(client.StreamOptions{})
	defer st.Close()
	sub := st.Subscribe(s.ID, client.Cursor{Epoch: s.Epoch})
	botOn := func(nd *node) *botProc {
		url, _ := daemonURL(t, nd.home)
		return runBot(t, append(os.Environ(), "ALBEDO_BOT_TOKEN="+bot.Token, "ALBEDO_HOME="+t.TempDir()), "--url", url, "--pace", "200ms")
	}
	onB := botOn(b)
	r, err := a.c.PutInput(ctx, s.ID, uuid.Must(uuid.NewV7()).String(), "count my words please")
	if err != nil {
		t.Fatal(err)
	}
	// Once its answer streams (from B, through A), the bot dies.
	for {
		it, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if it.Op == wire.PushDelta && it.Text.TurnID == r.TurnID {
			break
		}
	}
	onB.kill()
	botOn(a)
	var text string
	var reply *wire.Event
	for reply == nil {
		it, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case it.Op == wire.PushPartial && it.Text.TurnID == r.TurnID:
			text = it.Text.Text
		case it.Op == wire.PushDelta && it.Text.TurnID == r.TurnID:
			text += it.Text.Text
		case it.Op == wire.PushEvent && it.Event.TurnID == r.TurnID && it.Event.Type == wire.EventMessage:
			reply = it.Event
		}
	}
	// What streamed after the failover is the new bot's reply from its
	// start, none of the dead one's: a prefix of the committed text. A
	// reader slower than the commit may miss its tail, which the
	// contract drops once the turn's closing event is written.
	if reply.Author != "example" || reply.State != wire.MessageComplete || !strings.Contains(reply.Text, "Your message has 4 words") || !strings.HasPrefix(reply.Text, text) {
		t.Fatalf("reply %+v; streamed %q", reply, text)
	}
	evs := events(t, ctx, b.c, s.ID)
	if last := evs[len(evs)-1]; last.Type != wire.EventTurn || last.State != wire.TurnCompleted {
		t.Fatalf("the turn ended %+v", last)
	}
}
