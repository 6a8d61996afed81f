package api

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"albedo/api/ws"
	"albedo/api/ws/wstest"
	"albedo/wire"
)

func ptr[T any](v T) *T { return &v }

func isReplyTo(id int64) func(wire.Frame) bool {
	return func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == id }
}

// Every bad frame gets its documented error, the connection stays open, and
// nothing stored changes.
func TestWSBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	sess := e.create("s")
	e.do("PUT", "/v1/sessions/s/inputs/"+uuid1, nil, `{"text":"keep me"}`, nil)
	e.settle("s", 1)
	before := e.history("s")

	w := e.dial(true)
	// A command before hello.
	w.Send(wire.Command{ID: 5, Op: wire.OpSub, Session: "s"})
	if r := w.Reply(5); r.OK || r.Error.Code != wire.CodeHelloRequired {
		t.Fatalf("before hello: %+v", r)
	}
	w.Hello()

	cases := []struct {
		name  string
		frame string
		id    int64
		code  wire.Code
	}{
		{"malformed json", `{"id":7,"op":`, 0, wire.CodeBadRequest},
		{"wrong type keeps id", `{"id":8,"op":"sub","session":5}`, 8, wire.CodeBadRequest},
		{"no id", `{"op":"ping"}`, 0, wire.CodeBadRequest},
		{"no op", `{"id":9}`, 9, wire.CodeBadRequest},
		{"unknown op", `{"id":10,"op":"dance"}`, 10, wire.CodeUnknownOp},
		{"sub without session", `{"id":11,"op":"sub"}`, 11, wire.CodeBadRequest},
		{"sub missing session", `{"id":12,"op":"sub","session":"ghost"}`, 12, wire.CodeNotFound},
		{"send missing session", `{"id":13,"op":"send","session":"ghost","input_id":"` + uuid1 + `","text":"x"}`, 13, wire.CodeNotFound},
		{"send without input_id", `{"id":14,"op":"send","session":"s","text":"x"}`, 14, wire.CodeBadRequest},
		{"send bad input_id", `{"id":15,"op":"send","session":"s","input_id":"x","text":"x"}`, 15, wire.CodeBadRequest},
		{"send other text same id", `{"id":16,"op":"send","session":"s","input_id":"` + uuid1 + `","text":"changed"}`, 16, wire.CodeConflict},
		{"send too large", `{"id":17,"op":"send","session":"s","input_id":"` + uuid1[:35] + `2","text":"` + strings.Repeat("y", wire.MaxInputBytes+1) + `"}`, 17, wire.CodeTooLarge},
		{"second hello", `{"id":18,"op":"hello"}`, 18, wire.CodeBadRequest},
		{"bot op", `{"id":19,"op":"post","session":"s"}`, 19, wire.CodeForbidden},
		{"interrupt missing session", `{"id":20,"op":"interrupt","session":"ghost"}`, 20, wire.CodeNotFound},
		{"sub with a negative after", `{"id":21,"op":"sub","session":"s","after":-3,"epoch":"` + sess.Epoch + `"}`, 21, wire.CodeBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w.Send(tc.frame)
			r := w.Next(func(f wire.Frame) bool { return f.IsReply() })
			if r.Reply.ID != tc.id || r.Reply.OK || r.Reply.Error == nil || r.Reply.Error.Code != tc.code {
				t.Fatalf("reply %+v (error %+v), want id %d code %s", r, r.Reply.Error, tc.id, tc.code)
			}
		})
	}
	// Still open and working.
	w.Send(wire.Command{ID: 30, Op: wire.OpPing})
	if r := w.Reply(30); !r.OK {
		t.Fatalf("ping after errors: %+v", r)
	}
	// A sub beyond head is not an error: it resets. Replies and pushes are
	// two streams (docs/protocol.md): a writer already running may write
	// the reset before the reply, so the test takes them in either order.
	w.Send(wire.Command{ID: 31, Op: wire.OpSub, Session: "s", After: ptr(int64(50)), Epoch: sess.Epoch})
	var reply *wire.Reply
	var reset *wire.Frame
	for reply == nil || reset == nil {
		f := w.Next(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == 31 || f.Op == wire.PushReset })
		if f.IsReply() {
			reply = f.Reply
		} else {
			reset = &f
		}
	}
	if !reply.OK || reply.Recovered || reply.Head != int64(len(before)) {
		t.Fatalf("sub beyond head: %+v", reply)
	}
	if reset.Reset.Reason != wire.ResetAhead || reset.Reset.Head != int64(len(before)) {
		t.Fatalf("reset %+v", reset)
	}
	if got := e.history("s"); !reflect.DeepEqual(got, before) {
		t.Fatalf("events changed:\n%s\n%s", before, got)
	}
}

func TestWSClosesOnAbuse(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{MaxFrame: 4096})
	t.Run("wrong token in hello", func(t *testing.T) {
		w := e.dial(false)
		w.Send(wire.Command{ID: 1, Op: wire.OpHello, Token: "nope"})
		if code := w.Closed(); code != ws.StatusBadToken {
			t.Fatalf("close %d, want 4401", code)
		}
	})
	t.Run("token in hello", func(t *testing.T) {
		w := e.dial(false)
		w.Send(wire.Command{ID: 1, Op: wire.OpHello, Token: testToken})
		if r := w.Reply(1); !r.OK || r.Conn == "" || r.Boot != "boot1" || r.HeartbeatMS <= 0 {
			t.Fatalf("hello %+v", r)
		}
	})
	t.Run("no hello in time", func(t *testing.T) {
		// A daemon of its own: a timeout this short would cut the other
		// cases' hellos on a loaded machine.
		e := newEnv(t, Options{HelloTimeout: 200 * time.Millisecond})
		w := e.dial(true)
		if code := w.Closed(); code != websocket.StatusPolicyViolation {
			t.Fatalf("close %d, want 1008", code)
		}
	})
	t.Run("frame over the limit", func(t *testing.T) {
		w := e.dial(true)
		w.Hello()
		w.Send(`{"id":2,"op":"ping","pad":"` + strings.Repeat("z", 5000) + `"}`)
		if code := w.Closed(); code != websocket.StatusMessageTooBig {
			t.Fatalf("close %d, want 1009", code)
		}
	})
	for _, before := range []bool{true, false} {
		t.Run(fmt.Sprintf("text that is not UTF-8, hello first %v", before), func(t *testing.T) {
			w := e.dial(true)
			if before {
				w.Hello()
			}
			w.Send("{\"id\":2,\"op\":\"ping\",\"x\":\"\xff\xfe\"}")
			if code := w.Closed(); code != websocket.StatusInvalidFramePayloadData {
				t.Fatalf("close %d, want 1007", code)
			}
		})
	}
	t.Run("wrong header token is refused before upgrade", func(t *testing.T) {
		code, _ := e.do("GET", "/v1/ws", map[string]string{"Authorization": "Bearer nope"}, "", nil)
		if code != 401 {
			t.Fatalf("status %d", code)
		}
	})
}

// One websocket watching 100 sessions gets each session's events in order,
// batched several frames per message.
func TestWSManyChannelsOneSocket(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	var subs []wire.Sub
	for i := range 100 {
		s := e.create(fmt.Sprintf("s%03d", i))
		subs = append(subs, wire.Sub{Session: s.ID, After: ptr(int64(0)), Epoch: s.Epoch})
	}
	w := e.dial(true)
	r := w.Hello(subs...)
	if len(r.Subs) != 100 {
		t.Fatalf("hello replied %d subs", len(r.Subs))
	}
	for _, s := range r.Subs {
		if !s.OK || !s.Recovered {
			t.Fatalf("sub %+v", s)
		}
	}
	const each = 5
	for n := range each {
		for i := range 100 {
			e.do("PUT", fmt.Sprintf("/v1/sessions/s%03d/inputs/0190a8a0-0000-7000-8000-%012d", i, n), nil, fmt.Sprintf(`{"text":"%d"}`, n), nil)
		}
	}
	// Each input is a user message and a turn of three events.
	next := map[string]int64{}
	for got := 0; got < 100*each*4; got++ {
		f := w.Next(func(f wire.Frame) bool { return f.Op == wire.PushEvent })
		if want := next[f.Session] + 1; f.Event.Offset != want {
			t.Fatalf("%s: offset %d, want %d", f.Session, f.Event.Offset, want)
		}
		next[f.Session] = f.Event.Offset
	}
	for i := range 100 {
		if next[fmt.Sprintf("s%03d", i)] != each*4 {
			t.Fatalf("session %d ended at %d", i, next[fmt.Sprintf("s%03d", i)])
		}
	}
	// The hello reply and its 100 channels' resets, statuses and presences
	// cannot all have come one frame per message.
	if w.Batched.Load() == 0 {
		t.Fatalf("no message carried more than one frame")
	}
}

// A reader that never reads is closed after the write timeout; meanwhile it
// holds no growing queue in the daemon and does not delay other readers.
func TestWSStalledReader(t *testing.T) {
	e := newEnv(t, Options{WriteTimeout: 500 * time.Millisecond})
	s := e.create("s")
	// The stalled client reads its hello reply, then never reads again.
	raw := e.dialRaw(wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})

	fast := e.dial(true)
	fast.Hello(wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})

	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heapBefore := ms.HeapAlloc

	floodPastAStalledReader(e, fast, 120, 64<<10) // 7.5 MiB, echoed: beyond any socket buffer
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if grown := int64(ms.HeapAlloc) - int64(heapBefore); grown > 8<<20 {
		t.Fatalf("heap grew by %d MiB while a reader stalled: a queue is building", grown>>20)
	}
	// The stalled connection is dropped: its viewer leaves.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var st wire.Status
		e.do("GET", "/v1/sessions/s/status", nil, "", &st)
		if st.Viewers == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stalled reader still attached: %d viewers", st.Viewers)
		}
		fast.Send(wire.Command{ID: 99, Op: wire.OpPing}) // wait on an event, not a sleep
		fast.Reply(99)
	}
	if heartbeat, slow := e.srv.ws.Cuts(); heartbeat != 0 || slow != 1 {
		t.Fatalf("cuts: heartbeat %d, slow %d; want 0 and 1", heartbeat, slow)
	}
	// Its socket ends once it reads what the kernel had buffered.
	done := make(chan error, 1)
	go func() {
		for {
			if _, _, err := raw.Read(context.Background()); err != nil {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		t.Logf("stalled reader ended with: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatalf("stalled connection not closed")
	}
}

// floodPastAStalledReader is wstest.FloodPastAStalledReader with inputs
// put over HTTP.
func floodPastAStalledReader(e *env, fast *wsClient, n, size int) {
	e.t.Helper()
	wstest.FloodPastAStalledReader(e.t, fast, n, size, func(i int, text string) {
		b, _ := json.Marshal(map[string]string{"text": text})
		if code, _ := e.do("PUT", inputPath16(i), nil, string(b), nil); code != 202 {
			e.t.Fatalf("input %d: %d", i, code)
		}
	})
}

// inputPath16 is the path of the i-th of up to 2^48 inputs to session s.
func inputPath16(i int) string {
	return fmt.Sprintf("/v1/sessions/s/inputs/0190a8a0-0000-7000-8000-%012d", i)
}

// dialRaw says hello with subs as the owner, reads the hello reply and
// returns the connection without a reader (wstest.DialRaw).
func (e *env) dialRaw(subs ...wire.Sub) *websocket.Conn {
	e.t.Helper()
	return wstest.DialRaw(e.t, e.url, testToken, 0, subs...)
}
