package peer

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"albedo/db"
	"albedo/wire"
)

// recorder is a Handler that keeps what it is given.
type recorder struct {
	mu      sync.Mutex
	notices []Notice
	from    []string
	got     chan struct{}
	answer  func(Request) (Response, bool) // false: never answers
	onText  func(Text)
}

func newRecorder() *recorder { return &recorder{got: make(chan struct{}, 1<<12)} }

func (r *recorder) Notice(from string, n Notice) {
	r.mu.Lock()
	r.notices = append(r.notices, n)
	r.from = append(r.from, from)
	r.mu.Unlock()
	if t, ok := n.(Text); ok && r.onText != nil {
		r.onText(t)
	}
	r.got <- struct{}{}
}

func (r *recorder) Request(req Request, answer func(Response)) {
	if r.answer == nil {
		answer(Response{Running: true, Turn: req.Session})
		return
	}
	if resp, ok := r.answer(req); ok {
		answer(resp)
	}
}

func (r *recorder) Resumed() {}

// wait waits for n notices in all.
func (r *recorder) wait(t *testing.T, n int) []Notice {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		if len(r.notices) >= n {
			out := append([]Notice(nil), r.notices...)
			r.mu.Unlock()
			return out
		}
		r.mu.Unlock()
		select {
		case <-r.got:
		case <-deadline:
			t.Fatalf("%d notices within 10s, want %d", len(r.notices), n)
		}
	}
}

func join(t *testing.T, m *Memory, node string, h Handler) *MemoryBus {
	t.Helper()
	b := m.Join(node)
	if err := b.Start(h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// A notice reaches every other node, not its own, read back from its
// JSON; one kind's notices arrive in the order they were published.
func TestMemoryDeliversInOrderToOthers(t *testing.T) {
	t.Parallel()
	m := NewMemory()
	ra, rb, rc := newRecorder(), newRecorder(), newRecorder()
	a, _, _ := join(t, m, "a", ra), join(t, m, "b", rb), join(t, m, "c", rc)
	const n = 500
	for i := range n {
		a.Publish(Text{Node: "a", Session: "s", Turn: "t", Pos: i, Text: "x"})
	}
	for _, r := range []*recorder{rb, rc} {
		got := r.wait(t, n)
		for i, g := range got {
			if g.(Text).Pos != i || r.from[i] != "a" {
				t.Fatalf("notice %d is %+v from %s", i, g, r.from[i])
			}
		}
	}
	if len(ra.notices) != 0 {
		t.Fatal("a node heard its own notice")
	}
}

// A commit goes as its events and their kinds when they fit, and as its
// offsets only when they do not; either way other nodes read Events.
func TestCommitIsReadAsEvents(t *testing.T) {
	t.Parallel()
	m := NewMemory()
	rb := newRecorder()
	a := join(t, m, "a", newRecorder())
	join(t, m, "b", rb)
	small := []db.Event{
		{Session: "s", Offset: 7, Type: wire.EventMessage, JSON: []byte(`{"type":"message"}`), Meta: db.Meta{Role: wire.RoleUser, InputID: "i", TurnID: "t", Text: "hi"}},
		{Session: "s", Offset: 8, Type: wire.EventTurn, JSON: []byte(`{"type":"turn"}`), Meta: db.Meta{TurnID: "t", State: "started"}},
	}
	at := time.Unix(0, 12345)
	commit := Commit{Node: "a", Session: "s", Epoch: "e1", At: at, Events: small}
	enc, err1 := Encode(commit)
	marshalled, err2 := json.Marshal(commit)
	if err1 != nil || err2 != nil || string(enc) != string(marshalled) {
		t.Fatalf("Encode wrote %s (%v), json.Marshal %s (%v): a Commit goes one way", enc, err1, marshalled, err2)
	}
	a.Publish(commit)
	big := []db.Event{{Session: "s", Offset: 9, Type: wire.EventMessage, JSON: []byte(`"` + strings.Repeat("x", MaxCommitEvents) + `"`)}}
	a.Publish(Commit{Node: "a", Session: "s", At: at, Events: big})
	got := rb.wait(t, 2)
	e := got[0].(Events)
	if e.First != 7 || e.Last != 8 || e.At != 12345 || e.Epoch != "e1" || len(e.Events) != 2 || len(e.Kinds) != 2 {
		t.Fatalf("small commit: %+v", e)
	}
	if k := e.Kinds[0]; k.Type != wire.EventMessage || k.Meta() != (db.Meta{Role: wire.RoleUser, InputID: "i", TurnID: "t"}) {
		t.Fatalf("first kind %+v: the text is not a kind's", k)
	}
	if e := got[1].(Events); e.First != 9 || e.Last != 9 || e.Events != nil || e.Kinds != nil {
		t.Fatalf("a commit past MaxCommitEvents carries its events: %d of them", len(e.Events))
	}
}

// A handler may publish and ask from inside its own delivery: the bus
// holds no lock of its own while it calls one.
func TestMemoryHandlerMayPublishAndAsk(t *testing.T) {
	t.Parallel()
	m := NewMemory()
	ra, rb := newRecorder(), newRecorder()
	a := join(t, m, "a", ra)
	b := join(t, m, "b", rb)
	asked := make(chan Response, 1)
	rb.onText = func(Text) {
		b.Publish(Changes{Node: "b"})
		resp, err := b.Ask(context.Background(), Request{To: "a", Op: OpBotCheck, Session: "s"})
		if err != nil {
			t.Error(err)
		}
		asked <- resp
	}
	a.Publish(Text{Node: "a", Session: "s"})
	if _, ok := ra.wait(t, 1)[0].(Changes); !ok {
		t.Fatal("a did not hear b's notice")
	}
	if resp := <-asked; !resp.Running || resp.Turn != "s" {
		t.Fatalf("answer %+v", resp)
	}
}

// Asking a node that is not there, or left, fails at once; one that does
// not answer fails when the asker gives up.
func TestMemoryAskFailures(t *testing.T) {
	t.Parallel()
	m := NewMemory()
	a := join(t, m, "a", newRecorder())
	silent := newRecorder()
	silent.answer = func(Request) (Response, bool) { return Response{}, false }
	join(t, m, "b", silent)
	if _, err := a.Ask(context.Background(), Request{To: "nobody", Op: OpInterrupt}); err == nil {
		t.Fatal("asked a node that is not there")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := a.Ask(ctx, Request{To: "b", Op: OpInterrupt}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a silent node's answer: %v", err)
	}
	c := m.Join("c")
	if err := c.Start(newRecorder()); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := a.Ask(context.Background(), Request{To: "c", Op: OpInterrupt}); err == nil {
		t.Fatal("asked a node that left")
	}
	if _, err := (Nop{}).Ask(context.Background(), Request{To: "b"}); !errors.Is(err, ErrAlone) {
		t.Fatalf("Nop's Ask: %v", err)
	}
}

// Decode reads every kind, and refuses what it does not know.
func TestDecodeEveryKind(t *testing.T) {
	t.Parallel()
	for _, k := range Kinds {
		n, err := Decode(k, []byte(`{"node":"x"}`))
		if err != nil || n.Kind() != k {
			t.Fatalf("kind %s: %v, %T", k, err, n)
		}
	}
	if _, err := Decode("nope", []byte(`{}`)); err == nil {
		t.Fatal("decoded an unknown kind")
	}
	if _, err := Decode(KindText, []byte(`{"pos":"x"}`)); err == nil {
		t.Fatal("decoded a notice of the wrong shape")
	}
}

// Decode reads what another node sent, which may be anything: it never
// panics, and what it reads encodes again.
func FuzzDecode(f *testing.F) {
	f.Add(0, []byte(`{"node":"a","session":"s","first":1,"last":1,"events":[{}],"kinds":[{"t":"message"}]}`))
	f.Add(1, []byte(`{"node":"a","session":"s","turn":"t","pos":3,"text":"x","full":true}`))
	f.Add(4, []byte(`{"node":"a","sessions":[{"session":"s","people":[{"id":"m"}],"total":1,"viewers":1}]}`))
	f.Add(6, []byte(`{"node":"a","bots":{"x":1}}`))
	f.Fuzz(func(t *testing.T, kind int, data []byte) {
		k := Kinds[uint(kind)%uint(len(Kinds))]
		n, err := Decode(k, data)
		if err != nil {
			return
		}
		if n.Kind() != k {
			t.Fatalf("read %s as %s", k, n.Kind())
		}
		if _, err := json.Marshal(n); err != nil {
			t.Fatalf("read %s, which does not encode again: %v", k, err)
		}
	})
}
