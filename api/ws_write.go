package api

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/sync/errgroup"

	"albedo/hub"
)

// wsWriter is the state of a connection's writer goroutine.
//
// The write timeout is one timer per connection, armed around each write,
// rather than a context per write: coder/websocket watches a write's
// context with a context.AfterFunc, and at one small batch per event (a
// steady rate, many viewers) making and watching those contexts was a
// tenth of the daemon's CPU. Writes get a context that never ends; the
// timer cuts the connection, which ends the write.
type wsWriter struct {
	wc       *wsConn
	hc       *hub.Conn
	deadline *time.Timer // armed around each write
	slow     atomic.Bool // the deadline fired: the peer accepts nothing
	pinging  atomic.Bool // a heartbeat ping waits for its pong
}

// writeLoop pulls batches of frames from the hub and writes each as one
// message, and sends the heartbeat pings, until the connection ends or a
// bye is written. A write that cannot finish within the write timeout
// means the peer accepts nothing: the connection is closed as "slow". An
// idle connection holds no batch buffer (they come from a pool) and no
// goroutine besides its reader and this one.
func (wc *wsConn) writeLoop(ctx context.Context, hc *hub.Conn, g *errgroup.Group) error {
	w := &wsWriter{wc: wc, hc: hc}
	w.deadline = time.AfterFunc(time.Hour, func() {
		w.slow.Store(true)
		wc.ws.CloseNow()
	})
	w.deadline.Stop()
	defer w.deadline.Stop()
	// The end of ctx (the reader has gone) cuts a write in progress too.
	stop := context.AfterFunc(ctx, func() { wc.ws.CloseNow() })
	defer stop()
	beat := time.NewTicker(wc.s.opts.Heartbeat)
	defer beat.Stop()
	for {
		select {
		case r := <-wc.closeReq:
			wc.sayBye(ctx, r)
			return errConnDone
		default:
		}
		wrote, err := w.flush(ctx)
		if err != nil {
			return err
		}
		if wrote {
			continue
		}
		select {
		case <-hc.Wake():
		case r := <-wc.closeReq:
			wc.sayBye(ctx, r)
			return errConnDone
		case <-beat.C:
			w.heartbeat(ctx, g)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// flush writes one batch of what the hub has for the connection, if
// anything, and says whether it wrote.
func (w *wsWriter) flush(ctx context.Context) (bool, error) {
	s := w.wc.s
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	buf, err := w.hc.Fill(ctx, (*bp)[:0], s.opts.MaxBatch)
	*bp = buf[:0]
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("fill", "conn", w.hc.Info().ID, "err", err)
			w.wc.ws.Close(websocket.StatusInternalError, "internal error")
		}
		return false, err
	}
	if len(buf) == 0 {
		return false, nil
	}
	w.deadline.Reset(s.opts.WriteTimeout)
	err = w.wc.ws.Write(context.Background(), websocket.MessageText, buf)
	w.deadline.Stop()
	if err != nil {
		if w.slow.Load() {
			s.log.Warn("closing slow connection", "conn", w.hc.Info().ID, "timeout", s.opts.WriteTimeout)
			w.wc.ws.Close(websocket.StatusPolicyViolation, "slow")
		}
		return false, err
	}
	return true, nil
}

// heartbeat sends a ping unless one is still waiting for its pong. A ping
// waits for its pong, so it runs beside the writer, in the connection's
// group; a peer that does not answer within the next interval is gone.
func (w *wsWriter) heartbeat(ctx context.Context, g *errgroup.Group) {
	if !w.pinging.CompareAndSwap(false, true) {
		return
	}
	ws, interval := w.wc.ws, w.wc.s.opts.Heartbeat
	g.Go(func() error {
		defer w.pinging.Store(false)
		pctx, cancel := context.WithTimeout(ctx, interval)
		defer cancel()
		if ws.Ping(pctx) != nil && ctx.Err() == nil {
			ws.CloseNow()
		}
		return nil
	})
}

// sayBye writes bye as the connection's last frame and closes it. What a
// cursor had not written yet it fetches after reattaching from its offset.
func (wc *wsConn) sayBye(ctx context.Context, r closeReq) {
	wctx, cancel := context.WithTimeout(ctx, wc.s.opts.WriteTimeout)
	err := wc.ws.Write(wctx, websocket.MessageText, r.bye)
	cancel()
	if err == nil {
		wc.ws.Close(r.code, r.reason)
	}
}
