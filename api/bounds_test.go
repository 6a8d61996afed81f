package api

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"albedo/hub"
	"albedo/wire"
)

// bigSession makes session s with n inputs of size bytes each, and waits
// for their turns (echo replies as large).
func bigSession(e *env, n, size int) wire.Session {
	e.t.Helper()
	s := e.create("s")
	text := strings.Repeat("y", size)
	for i := range n {
		id := fmt.Sprintf("%s%04d", uuid1[:32], i)
		if code, _ := e.do("PUT", "/v1/sessions/s/inputs/"+id, nil, `{"text":"`+text+`"}`, nil); code != 202 {
			e.t.Fatalf("input %d: %d", i, code)
		}
	}
	e.settle("s", n)
	return s
}

// A subscriber catching up on large events — and its hello reply, which
// comes first — arrives in messages of at most 64 KiB (a larger frame
// alone), so a client with a small read limit is served; every event once,
// in order.
func TestCatchUpMessagesAreBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	s := bigSession(e, 6, 100_000)
	zero, window := int64(0), 10000
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, e.url+"/v1/ws", &websocket.DialOptions{Subprotocols: []string{wire.Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(256 << 10)
	hello := wire.Encode(wire.Command{ID: 1, Op: wire.OpHello, Token: testToken, Subs: []wire.Sub{{Session: "s", After: &zero, Epoch: s.Epoch, Window: &window}}})
	if err := c.Write(ctx, websocket.MessageText, hello); err != nil {
		t.Fatal(err)
	}
	next, head, first := int64(1), int64(24), true // 6 turns of 4 events
	for next <= head {
		_, msg, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read (event %d next): %v", next, err)
		}
		fs := bytes.Split(msg, []byte{'\n'})
		if len(fs) > 1 && len(msg) > 64<<10 {
			t.Fatalf("a message of %d bytes holds %d frames; the limit is 64 KiB", len(msg), len(fs))
		}
		for _, raw := range fs {
			f, err := wire.DecodeFrame(raw)
			if err != nil {
				t.Fatal(err)
			}
			if first && !f.IsReply() {
				t.Fatalf("the first frame is %s, not the hello reply", f.Op)
			}
			first = false
			if f.Event != nil {
				if f.Event.Offset != next {
					t.Fatalf("event %d, want %d", f.Event.Offset, next)
				}
				next++
			}
		}
	}
}

// A history page of large events ends at 1 MiB with more, not at its
// count of events.
func TestHistoryPageIsBoundedByBytes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	bigSession(e, 6, 200_000) // 24 events, 12 of them about 200 KB
	var p wire.Page
	e.do("GET", "/v1/sessions/s/events?limit=1000", nil, "", &p)
	if n := len(p.Events); n < 2 || n > 12 || !p.More || p.Head != 24 {
		t.Fatalf("first page: %d events, more %v, head %d; want about 1 MiB of them and more", n, p.More, p.Head)
	}
	size := 0
	for _, ev := range p.Events {
		size += len(ev.Text)
	}
	if size > 1<<20+200_000 {
		t.Fatalf("a page of %d bytes of text; the bound is 1 MiB plus one event", size)
	}
}

// A client that floods pings and reads their replies gets every one, once
// and in order, while the daemon holds back its reading: back-pressure
// slows the flood, it loses nothing.
func TestPingFloodAnsweredInOrderUnderBackPressure(t *testing.T) {
	e := newEnvWith(t, Options{}, hub.Options{MaxReplyBytes: 16 << 10})
	c := e.dialRaw()
	// A guard against a hang, not a speed check: 100 000 pings take a few
	// seconds alone, and far longer on a machine busy with other tests.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const msgs, per = 20, 5000
	sent := make(chan error, 1)
	go func() {
		id := 1
		for range msgs {
			var b bytes.Buffer
			for range per {
				id++
				fmt.Fprintf(&b, `{"id":%d,"op":"ping"}`+"\n", id)
			}
			if err := c.Write(ctx, websocket.MessageText, b.Bytes()); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	want := int64(2)
	for want <= msgs*per+1 {
		_, msg, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read (reply %d next): %v", want, err)
		}
		for _, raw := range bytes.Split(msg, []byte{'\n'}) {
			f, err := wire.DecodeFrame(raw)
			if err != nil || f.Reply == nil || !f.Reply.OK || f.Reply.ID != want {
				t.Fatalf("frame %s (%v), want the reply to ping %d", raw, err, want)
			}
			want++
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
}
