//go:build !e2e_only || e2e_cluster

package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/db/pgtest"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// A cluster is albedo daemons on one PostgreSQL database, each
// with a home of its own, as nodes on separate machines would be; the
// package's private PostgreSQL (db/pgtest) gives each test a database.
type cluster struct {
	t     *testing.T
	url   string
	sql   *sql.DB // the test's own look at the store
	fake  *fakeopenai.Server
	lease time.Duration
	nodes []*node
}

// startCluster starts n nodes with provider "fake" and the given lease,
// on a database of the package's PostgreSQL.
func startCluster(t *testing.T, n int, lease time.Duration) *cluster {
	t.Helper()
	return startClusterOn(t, clusterDatabase(t, n), n, lease)
}

// The package's PostgreSQL takes 200 connections (db/pgtest's
// max_connections) and a node opens up to 16 (db's pgPoolSize); the test
// itself holds a few (its own look at the store, the database's
// creation). Clusters of tests running at once could ask for more than
// the server takes, so each test first waits for its share of
// pgConnBudget.
const (
	pgConnBudget  = 190
	pgConnsByNode = 16
	pgConnsByTest = 4
)

var pgConns = newWeights(pgConnBudget)

// clusterDatabase is a new database of the package's PostgreSQL for a
// cluster of n nodes, once the connections they may open are free; they
// are counted free again after the test's other cleanups (its daemons
// killed, its database dropped).
func clusterDatabase(t *testing.T, n int) string {
	t.Helper()
	skipShort(t, "a cluster on PostgreSQL")
	pgConns.acquire(t, n*pgConnsByNode+pgConnsByTest)
	return pgtest.Shared(t).Database(t)
}

// weights is a semaphore of a number of units, taken a test's whole
// need at once, so that two tests cannot each hold part of what both
// need.
type weights struct {
	mu   sync.Mutex
	cond *sync.Cond
	free int
	max  int
}

func newWeights(n int) *weights {
	w := &weights{free: n, max: n}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// acquire waits until n units are free and takes them until t's cleanup.
func (w *weights) acquire(t *testing.T, n int) {
	t.Helper()
	n = min(n, w.max)
	w.mu.Lock()
	for w.free < n {
		w.cond.Wait()
	}
	w.free -= n
	w.mu.Unlock()
	t.Cleanup(func() {
		w.mu.Lock()
		w.free += n
		w.cond.Broadcast()
		w.mu.Unlock()
	})
}

// startClusterOn starts n nodes on the database at url; extra are more
// flags for every node (--nats).
func startClusterOn(t *testing.T, url string, n int, lease time.Duration, extra ...string) *cluster {
	t.Helper()
	skipShort(t, "a cluster on PostgreSQL")
	cl := &cluster{t: t, url: url, lease: lease}
	f, err := fakeopenai.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cl.fake = f
	if cl.sql, err = sql.Open("pgx", cl.url); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.sql.Close() })
	t.Cleanup(func() { cl.logWarnings(t) })
	for range n {
		cl.add(t, cl.url, extra...)
	}
	return cl
}

// logWarnings writes, when the test failed, what each node logged above
// INFO, or, for a node that logged nothing above it, its last lines of
// any level (what it ran, handed over or gave up): a flake on a loaded
// machine leaves its cause in the test's output.
func (cl *cluster) logWarnings(t *testing.T) {
	if !t.Failed() {
		return
	}
	const most = 40 // lines a node, its last ones
	for _, nd := range cl.nodes {
		var lines, every []string
		for l := range strings.Lines(nd.d.logText()) {
			every = append(every, l)
			if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
				lines = append(lines, l)
			}
		}
		all := len(lines)
		if all == 0 {
			t.Logf("%s warned 0 times; its last lines:\n%s", nd.name, strings.Join(every[max(0, len(every)-most):], ""))
			continue
		}
		lines = lines[max(0, all-most):]
		t.Logf("%s warned %d times; the last:\n%s", nd.name, all, strings.Join(lines, ""))
	}
}

// add starts one more node of the cluster, on the database at dbURL (the
// cluster's, or a way to it: a proxy) with extra flags.
func (cl *cluster) add(t *testing.T, dbURL string, extra ...string) *node {
	t.Helper()
	cfg := fmt.Sprintf("[providers.fake]\nkind = \"openai\"\nbase_url = %q\ndefault_model = \"fake-model\"\n", cl.fake.URL)
	nd := &node{name: fmt.Sprintf("node-%d", len(cl.nodes)), home: t.TempDir()}
	if err := os.WriteFile(filepath.Join(nd.home, client.ConfigFile), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	nd.args = append([]string{"--db", dbURL, "--node", nd.name, "--lease", cl.lease.String()}, extra...)
	nd.d = startDaemon(t, nd.home, nd.args...)
	nd.c = newClient(t, nd.home)
	cl.nodes = append(cl.nodes, nd)
	return nd
}

// owner names the node holding the session's lease, waiting for one.
func (cl *cluster) owner(ctx context.Context, session string) *node {
	cl.t.Helper()
	for {
		var name string
		err := cl.sql.QueryRowContext(ctx, `SELECT owner FROM runs WHERE session = $1`, session).Scan(&name)
		for _, nd := range cl.nodes {
			if err == nil && nd.name == name {
				return nd
			}
		}
		select {
		case <-ctx.Done():
			cl.t.Fatalf("no node holds session %s's lease (%v)", session, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// rawEvents returns GET /v1/sessions/{id}/events from a node, every page,
// as the bytes it answered.
func rawEvents(t *testing.T, nd *node, session string) []byte {
	t.Helper()
	info, err := client.ReadDaemonFile(nd.home)
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for after := int64(0); ; {
		req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/v1/sessions/%s/events?after=%d&limit=1000", info.Port, session, after), nil)
		req.Header.Set("Authorization", "Bearer "+info.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET events from %s: %d %v %s", nd.name, resp.StatusCode, err, b)
		}
		all = append(all, b...)
		var p struct {
			Events []json.RawMessage `json:"events"`
			More   bool              `json:"more"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		if !p.More || len(p.Events) == 0 {
			return all
		}
		after += int64(len(p.Events))
	}
}

// turnsOf checks a session's log: offsets 1..head with no gap, every turn
// started once and closed once, a turn's close before the next turn's
// start, turns in the order of their inputs. It returns the inputs' texts
// in order and the turns' closing states.
func turnsOf(t *testing.T, evs []wire.Event) (inputs []string, closed map[string]wire.Event) {
	t.Helper()
	closed = map[string]wire.Event{}
	started := map[string]bool{}
	turnOf := map[string]string{} // input's turn → its text
	var order []string            // turns in input order
	open := ""
	for i, ev := range evs {
		if ev.Offset != int64(i+1) {
			t.Fatalf("event %d has offset %d: a gap or a duplicate", i+1, ev.Offset)
		}
		switch {
		case ev.Type == wire.EventMessage && ev.Role == wire.RoleUser:
			inputs = append(inputs, ev.Text)
			turnOf[ev.TurnID] = ev.Text
			order = append(order, ev.TurnID)
		case ev.Type == wire.EventTurn && ev.State == wire.TurnStarted:
			if started[ev.TurnID] || open != "" {
				t.Fatalf("offset %d: turn %s started again or while %s was open", ev.Offset, ev.TurnID, open)
			}
			if want := order[len(started)]; ev.TurnID != want {
				t.Fatalf("offset %d: turn %s started before %s, whose input came first", ev.Offset, ev.TurnID, want)
			}
			started[ev.TurnID], open = true, ev.TurnID
		case ev.Type == wire.EventTurn:
			if _, again := closed[ev.TurnID]; again || ev.TurnID != open {
				t.Fatalf("offset %d: turn %s closed again, or while %q was the open one", ev.Offset, ev.TurnID, open)
			}
			closed[ev.TurnID], open = ev, ""
		}
	}
	return inputs, closed
}

// Inputs sent to 20 sessions (51 each) through three nodes at once: every node
// answers GET …/events with the same bytes, offsets dense, each input's
// turn started and closed exactly once, in input order, across nodes.
func TestClusterInputsThroughThreeNodes(t *testing.T) {
	parallelLongHeavy(t)
	// The default lease: this test is about order across nodes, not
	// takeover, and on a loaded machine a node can stall past a short
	// lease, whose takeover rightly ends the turn it ran as interrupted.
	cl := startCluster(t, 3, 10*time.Second) // the daemon's default
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// 51 inputs per session, a third through each node: 1 020 turns, each
	// three commits, on two cores beside the rest of the suite.
	const sessions, each = 20, 17 // inputs per session per node
	var ids []string
	for i := range sessions {
		s, err := cl.nodes[i%3].c.CreateSession(ctx, fmt.Sprintf("c%02d", i), wire.SessionCreate{Provider: "fake"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3*sessions)
	for n, nd := range cl.nodes {
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					if _, err := nd.c.PutInput(ctx, id, uuid.Must(uuid.NewV7()).String(), fmt.Sprintf("%s from %s #%d", id, nd.name, i)); err != nil {
						errs <- fmt.Errorf("node %d: %w", n, err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, id := range ids {
		waitTurnsClosed(t, ctx, cl.nodes[0].c, id, 3*each)
		evs := events(t, ctx, cl.nodes[0].c, id)
		inputs, closed := turnsOf(t, evs)
		if len(inputs) != 3*each || len(closed) != 3*each {
			t.Fatalf("%s: %d inputs, %d closed turns; want %d", id, len(inputs), len(closed), 3*each)
		}
		for turn, ev := range closed {
			if ev.State != wire.TurnCompleted {
				t.Fatalf("%s: turn %s %s (reason %q, error %q)", id, turn, ev.State, ev.Reason, ev.Error)
			}
		}
		// Each node's inputs in the order it sent them.
		for _, nd := range cl.nodes {
			next := 0
			for _, in := range inputs {
				if strings.Contains(in, " from "+nd.name+" ") {
					if want := fmt.Sprintf("%s from %s #%d", id, nd.name, next); in != want {
						t.Fatalf("%s: %q where %q was next", id, in, want)
					}
					next++
				}
			}
		}
		want := rawEvents(t, cl.nodes[0], id)
		for _, nd := range cl.nodes[1:] {
			if got := rawEvents(t, nd, id); string(got) != string(want) {
				t.Fatalf("%s: %s answers other bytes than %s", id, nd.name, cl.nodes[0].name)
			}
		}
	}
	var deadlocks int64
	if err := cl.sql.QueryRowContext(ctx, `SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&deadlocks); err != nil || deadlocks != 0 {
		t.Fatalf("%d deadlocks (%v)", deadlocks, err)
	}
}

// takeover sets up a session whose first turn streams slowly on one node
// and blocks, with two more inputs queued behind it; it returns the node
// running it and the turn's id once its text is checkpointed.
func (cl *cluster) takeover(ctx context.Context, block chan struct{}) (s wire.Session, owner *node, partial string) {
	t := cl.t
	t.Helper()
	// Titled: an untitled session gets a title event once a turn of it
	// completes, which may land after the turns are seen closed and be
	// counted as a write of the fenced node.
	s, err := cl.nodes[0].c.CreateSession(ctx, "t", wire.SessionCreate{Provider: "fake", Title: "takeover"})
	if err != nil {
		t.Fatal(err)
	}
	cl.fake.Push(fakeopenai.Reply{Chunks: []string{"half ", "an ", "answer"}, Pace: 600 * time.Millisecond, Block: block})
	for i, text := range []string{"first", "second", "third"} {
		if _, err := cl.nodes[i].c.PutInput(ctx, s.ID, uuid.Must(uuid.NewV7()).String(), text); err != nil {
			t.Fatal(err)
		}
	}
	owner = cl.owner(ctx, s.ID)
	for partial == "" {
		err := cl.sql.QueryRowContext(ctx, `SELECT partial FROM inputs WHERE session = $1 AND delivery = 'running'`, s.ID).Scan(&partial)
		if err != nil && err != sql.ErrNoRows {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			t.Fatal("the first turn's text was never checkpointed")
		case <-time.After(20 * time.Millisecond):
		}
	}
	return s, owner, partial
}

// checkTakeover checks the session's log after a takeover: the first
// turn interrupted (daemon_restart) with the checkpointed text, the
// queued ones completed in order.
func checkTakeover(t *testing.T, evs []wire.Event, partial string) {
	t.Helper()
	inputs, closed := turnsOf(t, evs)
	if strings.Join(inputs, ",") != "first,second,third" {
		t.Fatalf("inputs %v", inputs)
	}
	var states []string
	var interrupted string
	for _, ev := range evs {
		if ev.Type == wire.EventTurn && ev.State != wire.TurnStarted {
			states = append(states, ev.State+"/"+ev.Reason)
		}
		if ev.Type == wire.EventMessage && ev.State == wire.MessageInterrupted {
			interrupted = ev.Text
		}
	}
	if strings.Join(states, ",") != "interrupted/daemon_restart,completed/,completed/" || len(closed) != 3 {
		t.Fatalf("turns closed as %v", states)
	}
	if interrupted != partial {
		t.Fatalf("the interrupted reply is %q, the checkpoint was %q", interrupted, partial)
	}
}

// The node running a turn is SIGKILLed: another commits the turn as
// interrupted (daemon_restart) with the checkpointed text within the
// lease and 2 s, then runs the queued inputs in order.
func TestClusterTakesOverAKilledNodesTurn(t *testing.T) {
	// Not parallel: it wants the takeover within 2 s of the lease's end,
	// a bound the package's other tests beside it could push it past.
	cl := startCluster(t, 3, 2*time.Second)
	ctx := ctxT(t)
	block := make(chan struct{})
	defer close(block)
	s, owner, partial := cl.takeover(ctx, block)
	killed := time.Now()
	owner.d.kill()
	var other *node
	for _, nd := range cl.nodes {
		if nd != owner {
			other = nd
		}
	}
	waitTurnsClosed(t, ctx, other.c, s.ID, 1)
	took := time.Since(killed)
	if took > cl.lease+2*time.Second {
		t.Fatalf("the turn was taken over %v after the kill; the lease is %v", took, cl.lease)
	}
	t.Logf("taken over %v after the kill (lease %v)", took.Round(time.Millisecond), cl.lease)
	checkTakeover(t, waitTurnsClosed(t, ctx, other.c, s.ID, 3), partial)
}

// The node running a turn is stopped (SIGSTOP) past its lease, then let
// go on: another node has taken the turn over meanwhile, and nothing the
// first writes for it afterwards is committed — it finds its lease lost
// and drops the turn.
func TestClusterFencesAStoppedNode(t *testing.T) {
	parallel(t)
	cl := startCluster(t, 3, 2*time.Second)
	ctx := ctxT(t)
	block := make(chan struct{})
	s, owner, partial := cl.takeover(ctx, block)
	if err := owner.d.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var other *node
	for _, nd := range cl.nodes {
		if nd != owner {
			other = nd
		}
	}
	evs := waitTurnsClosed(t, ctx, other.c, s.ID, 3)
	if err := owner.d.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	close(block) // the stopped node's provider now finishes its reply
	waitLog(t, ctx, owner.d, "dropped a turn")
	after := events(t, ctx, other.c, s.ID)
	if len(after) != len(evs) {
		t.Fatalf("the stopped node wrote %d events after the takeover: %+v", len(after)-len(evs), after[len(evs):])
	}
	checkTakeover(t, after, partial)
}

// waitLog waits until a daemon's log has a line containing want.
func waitLog(t *testing.T, ctx context.Context, d *daemon, want string) {
	t.Helper()
	for !strings.Contains(d.logText(), want) {
		select {
		case <-ctx.Done():
			t.Fatalf("the daemon never logged %q:\n%s", want, d.logText())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// PostgreSQL restarted while three nodes take inputs: the nodes reconnect
// by themselves, every input a client holds a receipt for is in its
// session's log exactly once, and every turn closes. A
// client that got an error sends the same input again, as the contract
// says, until it has a receipt.
func TestClusterSurvivesAStoreRestart(t *testing.T) {
	parallelLongHeavy(t)
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	cl := startClusterOn(t, srv.Database(t), 3, 2*time.Second)
	// Three nodes and a store restart beside the package's other tests
	// take more than ctxT's 60 s (30 s alone): ctx only ends a run that
	// hangs.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const sessions, each = 4, 40
	var ids []string
	for i := range sessions {
		s, err := cl.nodes[0].c.CreateSession(ctx, fmt.Sprintf("r%d", i), wire.SessionCreate{Provider: "fake"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	var mu sync.Mutex
	receipted := map[string]int{} // input text → receipts held
	failures := 0
	var wg sync.WaitGroup
	halfway := make(chan struct{}, 3*sessions)
	for _, nd := range cl.nodes {
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					if i == each/4 {
						halfway <- struct{}{}
					}
					inputID, text := uuid.Must(uuid.NewV7()).String(), fmt.Sprintf("%s via %s #%d", id, nd.name, i)
					for {
						_, err := nd.c.PutInput(ctx, id, inputID, text)
						if err == nil {
							break
						}
						mu.Lock()
						failures++
						mu.Unlock()
						if ctx.Err() != nil {
							t.Errorf("%s: no receipt before the deadline: %v", text, err)
							return
						}
						time.Sleep(50 * time.Millisecond) // a client's back-off, not a synchronisation
					}
					mu.Lock()
					receipted[text]++
					mu.Unlock()
				}
			}()
		}
	}
	for range 3 * sessions {
		<-halfway
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	seen := map[string]int{}
	for _, id := range ids {
		evs := waitTurnsClosed(t, ctx, cl.nodes[1].c, id, 3*each)
		inputs, _ := turnsOf(t, evs)
		for _, in := range inputs {
			seen[in]++
		}
	}
	for text, n := range receipted {
		if seen[text] != 1 {
			t.Fatalf("%q: receipted %d times, in the logs %d times", text, n, seen[text])
		}
	}
	if len(seen) != len(receipted) {
		t.Fatalf("%d inputs in the logs, %d receipted", len(seen), len(receipted))
	}
	t.Logf("%d inputs, %d refused while the store restarted and sent again", len(receipted), failures)
}

// A node that has not heard of another's commits (here there is no NATS
// at all) still never tells a client that arrives with a later cursor
// "reset: ahead": it reads the head from the store first.
func TestClusterNodeBehindIsNotAhead(t *testing.T) {
	parallel(t)
	cl := startCluster(t, 2, 2*time.Second)
	ctx := ctxT(t)
	a, b := cl.nodes[0], cl.nodes[1]
	// Titled: an untitled session gets a title event after its first
	// turn, which would move the head past the one this test compares.
	s, err := a.c.CreateSession(ctx, "behind", wire.SessionCreate{Title: "behind"})
	if err != nil {
		t.Fatal(err)
	}
	// B loads the session now, at head 0, and keeps its channel.
	stB := b.c.Stream(client.StreamOptions{})
	defer stB.Close()
	subB := stB.Subscribe(s.ID, client.Cursor{Epoch: s.Epoch})
	if _, err := subB.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.c.PutInput(ctx, s.ID, uuid.Must(uuid.NewV7()).String(), "only on A's side"); err != nil {
		t.Fatal(err)
	}
	head := waitTurnsClosed(t, ctx, a.c, s.ID, 1)
	after := head[len(head)-1].Offset
	stB2 := b.c.Stream(client.StreamOptions{})
	defer stB2.Close()
	sub := stB2.Subscribe(s.ID, client.Cursor{Epoch: s.Epoch, Offset: after})
	for {
		it, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if it.Op == wire.PushReset {
			t.Fatalf("node B answered a cursor at %d with reset %q", after, it.Reset.Reason)
		}
		if it.Op == wire.PushStatus {
			if it.Status.Head != after {
				t.Fatalf("node B says head %d; the log's is %d", it.Status.Head, after)
			}
			return
		}
	}
}
