package ws

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"albedo/wire"
)

// A client that reads, however slowly, through a catch-up far larger than
// its socket holds gets a pong for each ping soon after it (RFC 6455
// §5.5.2: as soon as practical, between the daemon's messages), and is
// never cut: it reads everything, and every message whole.
func TestWSPongsComeBetweenTheMessagesOfACatchUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{WriteTimeout: time.Minute})
	s := e.create("s")
	last := e.echoed("s", 64, 32<<10) // 4 MiB of events: a thousand times the client's socket
	c := e.dialRawBuf(4096, wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var (
		mu      sync.Mutex
		worst   time.Duration
		pingErr error
	)
	stop := make(chan struct{})
	pinged := make(chan struct{})
	go func() {
		defer close(pinged)
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
			began := time.Now()
			err := c.Ping(pctx)
			pcancel()
			mu.Lock()
			if d := time.Since(began); d > worst {
				worst = d
			}
			if err != nil && pingErr == nil {
				pingErr = err
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()

	// Read at about 1 MB/s, 4 KiB at a time.
	began := time.Now()
	read := readPaced(t, ctx, c, last, func(read int64) {
		if ahead := time.Duration(read)*time.Microsecond - time.Since(began); ahead > 0 {
			time.Sleep(ahead) // pace the reader: it reads, slowly
		}
	})
	answerPings(c) // the ping in flight gets its pong
	close(stop)
	<-pinged
	mu.Lock()
	defer mu.Unlock()
	if pingErr != nil {
		t.Fatalf("a ping during the catch-up: %v", pingErr)
	}
	t.Logf("read %d bytes in %v; the slowest pong came %v after its ping", read, time.Since(began), worst)
	if worst > 2*time.Second {
		t.Fatalf("a pong came %v after its ping, in a catch-up read at 1 MB/s", worst)
	}
}

// A client that stops reading for longer than a pong may wait in
// coder/websocket (5 s), though not for the write timeout, while its ping
// waits behind the daemon's message, is not cut: the pong goes out after
// the message, and everything comes whole once the client reads again.
func TestWSAPongWaitingBehindAStalledMessageCutsNothing(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits 6 s for coder/websocket's control-frame timeout to pass")
	}
	e := newEnv(t, Options{WriteTimeout: time.Minute})
	s := e.create("s")
	last := e.echoed("s", 64, 32<<10) // 4 MiB of events: more than the socket holds
	c := e.dialRawBuf(4096, wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})
	wc := e.onlyConn()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Wait until the writer's message waits for the peer, holding the
	// socket's write lock, then ping.
	for wc.lean.wmu.TryLock() {
		wc.lean.wmu.Unlock()
		if ctx.Err() != nil {
			t.Fatal("the writer never waited for the peer")
		}
		time.Sleep(time.Millisecond)
	}
	pinged := make(chan error, 1)
	go func() { pinged <- c.Ping(ctx) }()
	stalled := time.Now()
	for time.Since(stalled) < 6*time.Second { // past the 5 s coder/websocket gives a pong
		if wc.ctx.Err() != nil {
			t.Fatalf("the connection was cut %v into the stall", time.Since(stalled))
		}
		time.Sleep(10 * time.Millisecond)
	}
	readPaced(t, ctx, c, last, func(int64) {})
	answerPings(c)
	if err := <-pinged; err != nil {
		t.Fatalf("the ping made during the stall: %v", err)
	}
}

// echoed puts n inputs of size bytes into session, each echoed by a turn,
// and waits until the last turn has ended. It returns the session's head.
func (e *env) echoed(session string, n, size int) int64 {
	e.t.Helper()
	text := strings.Repeat("x", size)
	for i := 1; i <= n; i++ {
		e.input(session, i, text)
	}
	last := int64(4 * n) // each input: its message, and a turn of 3 events that echoes it
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st, err := e.hub.Status(context.Background(), session)
		if err != nil {
			e.t.Fatal(err)
		}
		if st.Head == last {
			return last
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the session's head is %d, want %d", st.Head, last)
		}
	}
}

// readPaced reads c's events, 4 KiB at a time, until offset last, calling
// pace with the bytes read so far after each read; each event must follow
// the one before. It returns the bytes read.
func readPaced(t *testing.T, ctx context.Context, c *websocket.Conn, last int64, pace func(read int64)) int64 {
	t.Helper()
	want := int64(0)
	buf := make([]byte, 4096)
	var read int64
	for want == 0 || want <= last {
		_, r, err := c.Reader(ctx)
		if err != nil {
			t.Fatalf("read after %d events: %v", want-1, err)
		}
		var msg []byte
		for {
			k, err := r.Read(buf)
			msg = append(msg, buf[:k]...)
			read += int64(k)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("read in a message after %d events: %v", want-1, err)
			}
			pace(read)
		}
		if want == 0 {
			want = firstOffset(t, msg) // DialRaw read the hello's reply, and the first events with it
		}
		want = eventsInOrder(t, msg, want)
	}
	return read
}

// firstOffset is the offset of the first event pushed in msg.
func firstOffset(t *testing.T, msg []byte) int64 {
	t.Helper()
	for _, fr := range splitFrames(msg) {
		if f, err := wire.DecodeFrame(fr); err == nil && f.Op == wire.PushEvent {
			return f.Event.Offset
		}
	}
	t.Fatalf("no event in %.200q", msg)
	return 0
}

// A peer that reads nothing is cut within the write timeout of the
// daemon's first unanswered ping, however much its socket takes: here
// the session's events trickle in, so every write completes, into the
// peer's kernel buffers, for far longer than the timeout.
func TestWSAPeerThatNeverReadsIsCutWithinTheWriteTimeout(t *testing.T) {
	e := newEnv(t, Options{WriteTimeout: 2 * time.Second, Heartbeat: 200 * time.Millisecond})
	s := e.create("s")
	silent := e.dialRaw(wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})
	defer silent.CloseNow()
	wc := e.onlyConn()
	began := time.Now()
	text := strings.Repeat("t", 1<<10)
	for i := 1; wc.ctx.Err() == nil; i++ {
		if time.Since(began) > 8*time.Second {
			t.Fatalf("a peer that reads nothing is still connected after %v", time.Since(began))
		}
		e.input("s", i, text)
		time.Sleep(50 * time.Millisecond) // a trickle: about 40 KB/s of events
	}
	t.Logf("cut after %v", time.Since(began))
	if heartbeat, slow := e.srv.Cuts(); heartbeat != 1 || slow != 0 {
		t.Fatalf("cuts: heartbeat %d, slow %d; want 1 and 0", heartbeat, slow)
	}
}
