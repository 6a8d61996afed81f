package ws

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"albedo/hub"
)

// writer writes what the hub has for one connection, and its heartbeat
// pings. It keeps no goroutine while there is nothing to write: the hub
// calls kick (hub.Conn.OnWake) when there is, and kick has the server's
// writerPool (or, for a socket that is not the kernel's, a goroutine of
// its own) run the writer until Fill has nothing more. An idle connection
// so costs its reader's goroutine and nothing else that runs: a writer
// parked per connection would hold a stack for every idle one.
//
// The write timeout is one timer per connection, armed around each write,
// rather than a context per write: coder/websocket watches a write's
// context with a context.AfterFunc, and at one small batch per event (a
// steady rate, many viewers) making and watching those contexts would
// cost more than the write. Writes get a context that never ends; the
// timer cuts the connection, which ends the write.
//
// kick and beat may be called from any goroutine; run is the only one that
// calls Fill, and at most one runs at a time.
type writer struct {
	// static after construction
	wc       *conn
	hc       *hub.Conn
	ctx      context.Context // the connection's: its end stops everything
	stop     func()          // ends the connection's context (and so its reader)
	deadline *time.Timer     // armed around each write
	heart    *time.Timer     // the next heartbeat ping

	slow    atomic.Bool // the deadline fired: the peer accepts nothing
	pinging atomic.Bool // a heartbeat ping waits for its pong
	// A write of the writer's is in progress. The write timeout, not the
	// heartbeat, rules a peer while it lasts: a ping would wait behind the
	// write (its frame needs the write's lock) and, at most the heartbeat
	// later, cut a peer that is taking the write slowly, however long
	// --write-timeout allows. writes counts the writes begun, so that a
	// ping whose pong is missing cuts nothing if one began meanwhile. (A
	// ping that starts just before a write can still find its frame
	// behind it: coder/websocket ends a control frame's wait at 5 s, and
	// closes the connection then.)
	writing     atomic.Bool
	writes      atomic.Int64
	idleBeats   atomic.Int32 // heartbeats that sent no ping for a write in progress (tests wait on it)
	sparedBeats atomic.Int32 // unanswered pings that cut nothing: the daemon was behind (tests wait on it)

	// The pool worker's "left the pool" while run is on one, else nil:
	// set by the worker before each run, read and set only by that run's
	// goroutine (writerPool.leave, from a write about to wait). A flag of
	// the worker's, not the writer's: once run ends another worker may
	// run this writer while the first is still looking at its own.
	left *bool

	mu      sync.Mutex
	running bool           // a goroutine is in run
	again   bool           // kicked while running: look again before ending
	done    bool           // the connection is over: start nothing more
	wg      sync.WaitGroup // run and the pings in flight
}

// newWriter makes the writer of wc's hub connection hc, with no goroutine
// yet, and arms its heartbeat. ctx is the connection's and stop ends it.
func newWriter(ctx context.Context, stop func(), wc *conn, hc *hub.Conn) *writer {
	w := &writer{wc: wc, hc: hc, ctx: ctx, stop: stop}
	w.deadline = time.AfterFunc(time.Hour, func() {
		w.slow.Store(true)
		wc.ws.CloseNow()
	})
	w.deadline.Stop()
	w.heart = time.AfterFunc(wc.s.opts.Heartbeat, w.beat)
	if wc.lean != nil {
		wc.lean.onBlock = func() { wc.s.writers.leave(w) }
	}
	return w
}

// kick makes sure a goroutine will look for something to write: it starts
// one, or tells the one running to look again before it ends.
func (w *writer) kick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.done:
	case w.running:
		w.again = true
	default:
		w.running = true
		w.wg.Add(1)
		if w.wc.lean != nil {
			w.wc.s.writers.submit(w) // a worker leaves the pool if this peer would block it
		} else {
			go w.run()
		}
	}
}

// run writes batches until there is nothing left to write, the connection
// ends, or a bye has been written. A write that cannot finish within the
// write timeout means the peer accepts nothing: the connection is closed
// as "slow". A write that fails, or a bye, ends the connection's context,
// and so its reader.
func (w *writer) run() {
	defer w.wg.Done()
	for {
		select {
		case r := <-w.wc.closeReq:
			w.wc.s.writers.leave(w) // the close handshake waits for the peer
			w.writes.Add(1)
			w.writing.Store(true) // the bye is a write: its timeout rules
			w.wc.sayBye(w.ctx, r)
			w.stopAll()
			return
		default:
		}
		if w.ctx.Err() != nil {
			w.stopAll()
			return
		}
		wrote, err := w.flush()
		if err != nil {
			w.stop()
			w.stopAll()
			return
		}
		if wrote {
			continue
		}
		w.mu.Lock()
		if !w.again {
			w.running = false
			w.mu.Unlock()
			if f := w.wc.s.writerIdle; f != nil {
				f()
			}
			return
		}
		w.again = false
		w.mu.Unlock()
	}
}

// stopAll marks the writer done (nothing starts after it) and ends the
// connection's context.
func (w *writer) stopAll() {
	w.mu.Lock()
	w.done, w.running = true, false
	w.mu.Unlock()
	w.stop()
}

// close stops the writer and waits for its goroutines: the one in run (cut
// by the connection's end) and any ping. The caller has ended ctx.
func (w *writer) close() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
	w.heart.Stop()
	w.wg.Wait()
	w.deadline.Stop()
}

// flush writes one batch of what the hub has for the connection, if
// anything, and says whether it wrote.
func (w *writer) flush() (bool, error) {
	s := w.wc.s
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	buf, err := w.hc.Fill(w.ctx, (*bp)[:0], s.opts.MaxBatch)
	*bp = buf[:0]
	if err != nil {
		if w.ctx.Err() == nil {
			s.log.Error("fill", "conn", w.hc.Info().ID, "err", err)
			w.wc.s.writers.leave(w) // the close handshake waits for the peer
			w.wc.ws.Close(websocket.StatusInternalError, "internal error")
		}
		return false, err
	}
	if len(buf) == 0 {
		return false, nil
	}
	w.deadline.Reset(s.opts.WriteTimeout)
	w.writes.Add(1)
	w.writing.Store(true)
	err = w.wc.write(buf)
	w.writing.Store(false)
	w.deadline.Stop()
	if err != nil {
		if w.slow.Load() {
			s.log.Warn("closing slow connection", "conn", w.hc.Info().ID, "timeout", s.opts.WriteTimeout)
			s.slowCuts.Add(1)
			w.wc.s.writers.leave(w) // the close handshake waits for the peer
			w.wc.ws.Close(websocket.StatusPolicyViolation, "slow")
		}
		return false, err
	}
	return true, nil
}

// beat runs on the heartbeat timer's goroutine: it arms the next beat and
// sends a ping, unless one is still waiting for its pong or a write is in
// progress (writing). A peer that does not answer within the interval is
// gone, unless a write is in progress then: the ping may be behind it
// (one that began as the ping was sent), so the peer has until the write
// timeout, counted from the ping, to answer. Writes that complete, into
// a socket that takes them, spare nothing: a peer whose kernel buffers
// what it never reads is cut all the same. Unless the daemon is behind on it
// (conn.behind): then its pong may have come and wait unread, and cutting
// it would cost a reconnect, many times what keeping it costs, of a node
// already short of time.
func (w *writer) beat() {
	interval := w.wc.s.opts.Heartbeat
	w.mu.Lock()
	if w.done {
		w.mu.Unlock()
		return
	}
	w.heart.Reset(interval)
	if w.writing.Load() {
		w.idleBeats.Add(1)
		w.mu.Unlock()
		return
	}
	if !w.pinging.CompareAndSwap(false, true) {
		w.mu.Unlock()
		return
	}
	w.wg.Add(1)
	w.mu.Unlock()
	defer w.wg.Done()
	defer w.pinging.Store(false)
	pctx, cancel := context.WithTimeout(w.ctx, max(interval, w.wc.s.opts.WriteTimeout))
	defer cancel()
	missing := time.AfterFunc(interval, func() {
		if !w.writing.Load() {
			cancel() // no write the ping could be behind: the pong is missing
		}
	})
	err := w.wc.pingPeer(pctx)
	missing.Stop()
	if errors.Is(err, errPingNotWritten) {
		w.wc.s.heartbeatCuts.Add(1) // and closed
		return
	}
	if err == nil || w.ctx.Err() != nil {
		return
	}
	if w.wc.behind() {
		w.sparedBeats.Add(1)
		return
	}
	w.wc.s.heartbeatCuts.Add(1)
	w.wc.ws.CloseNow()
}

// pingWriteTimeout bounds the write of a heartbeat's ping, as
// coder/websocket bounds that of a control frame.
const pingWriteTimeout = 5 * time.Second

// errPingNotWritten is pingPeer's when the ping could not be written
// within pingWriteTimeout: the connection is closed.
var errPingNotWritten = errors.New("websocket: the heartbeat's ping could not be written")

// pingPeer sends a websocket ping and waits until ctx ends or a pong
// comes. On a lean socket the ping is the socket's own (sendPing), and
// its pong is read by the socket while the reader waits for a message
// (leanConn.await) or by the library's reader while it reads one
// (OnPongReceived); any pong answers it.
func (wc *conn) pingPeer(ctx context.Context) error {
	lc := wc.lean
	if lc == nil {
		return wc.ws.Ping(ctx)
	}
	pong := make(chan struct{}, 1)
	pongs := lc.pongs.Load()
	lc.onPong.Store(&pong)
	defer lc.onPong.Store(nil)
	// A ping the socket does not take in time (this goroutine writes it,
	// if the socket is free) closes the connection, as the library's own
	// ping did; one kept for the writer's message to end waits in that
	// message's write timeout.
	stuck := time.AfterFunc(pingWriteTimeout, func() { wc.ws.CloseNow() })
	sent := lc.sendPing()
	if !stuck.Stop() {
		return errPingNotWritten
	}
	if !sent {
		return nil // the connection is closing: its close handshake rules
	}
	select {
	case <-pong:
		return nil
	case <-ctx.Done():
	}
	if lc.pongs.Load() != pongs {
		return nil
	}
	return fmt.Errorf("no pong: %w", context.Cause(ctx))
}

// sayBye writes bye as the connection's last frame and closes it. What a
// cursor had not written yet it fetches after reattaching from its offset.
func (wc *conn) sayBye(ctx context.Context, r closeReq) {
	wctx, cancel := context.WithTimeout(ctx, wc.s.opts.WriteTimeout)
	err := wc.ws.Write(wctx, websocket.MessageText, r.bye)
	cancel()
	if err == nil {
		wc.ws.Close(r.code, r.reason)
	}
}
