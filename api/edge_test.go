package api

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"albedo/api/ws"
	"albedo/hub"
	"albedo/wire"
)

// otherProcess opens the env's store a second time, as `albedo tokens`
// does from its own process.
func (e *env) otherProcess() *hub.Hub {
	e.t.Helper()
	h, err := hub.Open(context.Background(), e.path, hub.Options{}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// An owner token made in the store by another process is accepted once the
// daemon re-reads its tokens (SIGHUP), exactly like the daemon.json token;
// removing it there and re-reading closes its websockets with 4401.
func TestOwnerTokensFromTheStore(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	other := e.otherProcess()
	tok, err := other.AddOwner(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := e.do("GET", "/v1/sessions", e.as(tok), "", nil); code != 401 {
		t.Fatalf("before a reload: %d, want 401", code)
	}
	if n, err := e.srv.ReloadTokens(context.Background()); err != nil || n != 0 {
		t.Fatalf("reload: %d %v", n, err)
	}
	// Every owner-only route: a session made, changed, its input, a bot.
	var s wire.Session
	if code, _ := e.do("POST", "/v1/sessions", e.as(tok), `{"title":"by alice"}`, &s); code != 201 {
		t.Fatalf("create as alice: %d", code)
	}
	if code, _ := e.do("POST", "/v1/bots", e.as(tok), `{"name":"b"}`, nil); code != 201 {
		t.Fatalf("add a bot as alice: %d", code)
	}
	w := e.dialToken(tok)
	if r := w.Hello(); r.Role != wire.TokenOwner {
		t.Fatalf("hello as alice: role %q", r.Role)
	}
	header := e.dial(true) // the daemon.json token's socket stays open
	header.Hello()

	// Names: validated, unique among owners (a bot may share one).
	var werr *wire.Error
	if _, err := other.AddOwner(context.Background(), "Alice Smith"); !errors.As(err, &werr) || werr.Code != wire.CodeBadRequest {
		t.Fatalf("a bad name: %v", err)
	}
	if _, err := other.AddOwner(context.Background(), "alice"); !errors.As(err, &werr) || werr.Code != wire.CodeConflict {
		t.Fatalf("a taken name: %v", err)
	}
	if _, err := other.AddOwner(context.Background(), "b"); err != nil {
		t.Fatalf("an owner named like a bot: %v", err)
	}

	if _, err := other.RemoveOwner(context.Background(), "alice"); err != nil {
		t.Fatal(err)
	}
	if n, err := e.srv.ReloadTokens(context.Background()); err != nil || n != 1 {
		t.Fatalf("reload after remove: %d revoked, %v; want 1", n, err)
	}
	if code := w.Closed(); code != ws.StatusBadToken {
		t.Fatalf("alice's socket closed with %d, want 4401", code)
	}
	if code, _ := e.do("GET", "/v1/sessions", e.as(tok), "", nil); code != 401 {
		t.Fatalf("removed token: %d, want 401", code)
	}
	header.Send(wire.Command{ID: 2, Op: wire.OpPing})
	if r := header.Reply(2); !r.OK {
		t.Fatalf("the owner's socket after alice's removal: %+v", r.Error)
	}
	if _, err := other.RemoveOwner(context.Background(), "alice"); !errors.As(err, &werr) || werr.Code != wire.CodeNotFound {
		t.Fatalf("remove a missing owner: %v", err)
	}
}

// /readyz needs no token, answers 200 while the store and every extra
// check answer, and 503 with a reason that names the check (not its
// error) otherwise, and while the daemon stops; an advisory check (a
// cluster's NATS) is reported and leaves it ready.
func TestReadyz(t *testing.T) {
	t.Parallel()
	var natsDown, adviceDown atomic.Bool
	e := newEnv(t, Options{ReadyChecks: []ReadyCheck{{Name: "nats", Check: func(context.Context) error {
		if natsDown.Load() {
			return errors.New("nats: connection refused to 10.1.2.3:4222")
		}
		return nil
	}}, {Name: "advice", Advisory: true, Check: func(context.Context) error {
		if adviceDown.Load() {
			return errors.New("down")
		}
		return nil
	}}}})
	get := func() (int, readyState) {
		t.Helper()
		var st readyState
		code, _ := e.do("GET", "/readyz", map[string]string{"Authorization": ""}, "", &st)
		return code, st
	}
	if code, st := get(); code != 200 || !st.Ready || st.Checks["store"] != "ok" || st.Checks["nats"] != "ok" {
		t.Fatalf("ready: %d %+v", code, st)
	}
	adviceDown.Store(true)
	if code, st := get(); code != 200 || !st.Ready || st.Checks["advice"] != "failing" {
		t.Fatalf("an advisory check failing: %d %+v", code, st)
	}
	adviceDown.Store(false)
	natsDown.Store(true)
	code, st := get()
	if code != 503 || st.Ready || st.Reason != "nats: failing" || strings.Contains(st.Reason, "10.1.2.3") {
		t.Fatalf("nats down: %d %+v", code, st)
	}
	natsDown.Store(false)
	e.srv.storePing = func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() } // a store that hangs
	if code, st := get(); code != 503 || st.Reason != "store: no answer within 2s" {
		t.Fatalf("store hangs: %d %+v", code, st)
	}
	e.srv.storePing = func(context.Context) error { return errors.New("dial tcp db.internal:5432: refused") }
	if code, st := get(); code != 503 || st.Reason != "store: failing" || st.Checks["nats"] != "" {
		t.Fatalf("store fails: %d %+v", code, st)
	}
	e.srv.storePing = nil
	if code, _ := get(); code != 200 {
		t.Fatalf("store back: %d", code)
	}
	e.srv.Close()
	if code, st := get(); code != 503 || st.Reason != "the daemon is stopping" {
		t.Fatalf("stopping: %d %+v", code, st)
	}
	// The handler of a listener of its own says the same.
	rec := &recorder{header: http.Header{}}
	e.srv.ReadyHandler().ServeHTTP(rec, &http.Request{Method: "GET"})
	if rec.code != 503 || !strings.Contains(rec.body.String(), "stopping") {
		t.Fatalf("ReadyHandler: %d %s", rec.code, rec.body.String())
	}
}

type recorder struct {
	header http.Header
	code   int
	body   strings.Builder
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = 200
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(code int) { r.code = code }

// The collector exports connections by role, channels, deliveries, the
// writer's batch sizes and commit latency, and turn durations, from what
// the daemon has done.
func TestMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(e.srv.Collector())
	e.create("s")
	w := e.dial(true)
	zero := int64(0)
	w.Hello(wire.Sub{Session: "s", After: &zero})
	if code, _ := e.do("PUT", "/v1/sessions/s/inputs/0190a4a6-7a4e-7c3e-8b1a-2d3c4e5f6a7b", nil, `{"text":"hi"}`, nil); code != 202 {
		t.Fatalf("input: %d", code)
	}
	var evs []wire.Event
	for {
		f := w.Next(func(f wire.Frame) bool { return f.Op == wire.PushEvent })
		evs = append(evs, *f.Event)
		if f.Event.Type == wire.EventTurn && f.Event.State == wire.TurnCompleted {
			break
		}
	}
	// The turn's duration is counted once its runner has its end
	// committed, which the socket may show before: the idle status that
	// follows is sent after it (hub.runOne).
	w.Next(func(f wire.Frame) bool {
		return f.Op == wire.PushStatus && f.Status != nil && f.Status.Phase == wire.PhaseIdle
	})

	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		got[f.GetName()] = f
	}
	value := func(name string, labels ...string) float64 {
		t.Helper()
		f := got[name]
		if f == nil {
			t.Fatalf("no %s in %v", name, got)
		}
	metrics:
		for _, m := range f.Metric {
			for i, lp := range m.Label {
				if i*2+1 >= len(labels) || lp.GetName() != labels[i*2] || lp.GetValue() != labels[i*2+1] {
					continue metrics
				}
			}
			switch {
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
		t.Fatalf("no %s%v", name, labels)
		return 0
	}
	if v := value("albedo_connections", "role", "owner"); v != 1 {
		t.Errorf("owner connections: %v, want 1", v)
	}
	if v := value("albedo_channels"); v != 1 {
		t.Errorf("channels: %v, want 1", v)
	}
	if v := value("albedo_deliveries_total"); v < float64(len(evs)) {
		t.Errorf("deliveries: %v, want at least the %d events the socket saw", v, len(evs))
	}
	if v := value("albedo_turn_seconds", "state", "completed"); v != 1 {
		t.Errorf("completed turns: %v, want 1", v)
	}
	if v := value("albedo_writer_commit_seconds"); v < 3 {
		t.Errorf("commits: %v, want the session's, the input's, the turn's", v)
	}
	if v := value("albedo_writer_batch_size"); v < value("albedo_writer_commit_seconds") {
		t.Errorf("batches %v fewer than commits %v", v, value("albedo_writer_commit_seconds"))
	}
	value("albedo_writer_retries_total", "why", "row_locked")
	// newEnv folds the event log every 3 events: the session's, the
	// input's and the turn's make at least one fold.
	if v := value("albedo_writer_folds_total", "result", "ok"); v < 1 {
		t.Errorf("folds: %v, want at least 1", v)
	}
	if v := value("albedo_writer_folds_total", "result", "failed"); v != 0 {
		t.Errorf("failed folds: %v", v)
	}
	if v := value("albedo_writer_folded_events_total"); v < 3 {
		t.Errorf("folded events: %v, want at least 3", v)
	}
}

// The table of metrics in docs/server.md names every metric the daemon
// exports.
func TestDocNamesEveryMetric(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/server.md")
	if err != nil {
		t.Fatal(err)
	}
	descs := make(chan *prometheus.Desc, 64)
	collector{}.Describe(descs)
	close(descs)
	var names []string
	for d := range descs {
		names = append(names, fqName(t, d))
	}
	for _, n := range names {
		if !strings.Contains(string(doc), "| `"+n) {
			t.Errorf("docs/server.md's table of metrics does not name %s", n)
		}
	}
}

// fqName reads a metric's name from its description, which has no getter.
func fqName(t *testing.T, d *prometheus.Desc) string {
	t.Helper()
	_, rest, ok := strings.Cut(d.String(), `fqName: "`)
	name, _, ok2 := strings.Cut(rest, `"`)
	if !ok || !ok2 {
		t.Fatalf("no name in %s", d)
	}
	return name
}
