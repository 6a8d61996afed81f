package api

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/labstack/echo/v4"

	"albedo/api/wire"
	"albedo/hub"
)

// Close codes of PROTOCOL.md beyond those coder/websocket names.
const (
	StatusBadToken websocket.StatusCode = 4401
)

// wsConn is one websocket connection. Its reader runs serve, started by the
// HTTP handler, which returns at once; the writer (which also sends the
// heartbeat pings) is started by serve and waited for by it.
type wsConn struct {
	// static after construction
	s  *Server
	ws *websocket.Conn

	hcMu sync.Mutex
	hc   *hub.Conn     // set by the reader at hello; read by bye
	p    hub.Principal // from the header, or from hello; read by revocation

	closeOnce sync.Once
	closeReq  chan closeReq // capacity 1: bye asks the writer to flush and close
}

type closeReq struct {
	code   websocket.StatusCode
	reason string
	bye    []byte // the last frame before the close
}

func (s *Server) websocket(c echo.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return &wire.Error{Code: wire.CodeDaemonStopping, Message: "the daemon is stopping"}
	}
	s.wg.Add(1)
	s.mu.Unlock()

	ws, err := websocket.Accept(c.Response(), c.Request(), &websocket.AcceptOptions{
		Subprotocols:    []string{wire.Subprotocol},
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		s.wg.Done()
		return nil // Accept has written the HTTP error
	}
	ws.SetReadLimit(s.opts.MaxFrame)
	if ws.Subprotocol() != wire.Subprotocol {
		s.wg.Done()
		ws.Close(websocket.StatusPolicyViolation, "subprotocol "+wire.Subprotocol+" required")
		return nil
	}
	p, _ := principalOf(c)
	wc := &wsConn{s: s, ws: ws, p: p, closeReq: make(chan closeReq, 1)}
	if s.afterAccept != nil {
		s.afterAccept()
	}
	s.mu.Lock()
	if s.closing {
		// Bye (or Close) began during the upgrade and did not see this
		// connection: it must not outlive them. Registering it anyway
		// left Bye waiting for ever (the e2e suite's stop that hung).
		s.mu.Unlock()
		s.wg.Done()
		ws.Close(websocket.StatusGoingAway, "the daemon is stopping")
		return nil
	}
	s.conns[wc] = struct{}{}
	s.mu.Unlock()
	// The connection is hijacked: net/http is done with it once this
	// handler returns, and lets go of what it still held for the request
	// (its buffers, the request, echo's context, a deep stack) — a third of
	// an idle connection's memory. The reader is a goroutine of its own.
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.conns, wc)
			s.mu.Unlock()
		}()
		wc.serve()
	}()
	return nil
}

// bye queues a bye push and asks the writer to close once it is written.
func (wc *wsConn) bye(reason string, retryAfter time.Duration) {
	code := websocket.StatusGoingAway
	if reason == wire.ByeRestart {
		code = websocket.StatusServiceRestart
	}
	wc.closeOnce.Do(func() {
		hc := wc.hubConn()
		if hc == nil {
			// Still waiting for hello: there is no writer to flush.
			go wc.ws.Close(code, "daemon "+reason)
			return
		}
		bye, _ := json.Marshal(wire.ByePush{Op: wire.PushBye, Reason: reason, RetryAfterMS: retryAfter.Milliseconds()})
		wc.closeReq <- closeReq{code, "daemon " + reason, bye}
	})
}

func (wc *wsConn) principal() hub.Principal {
	wc.hcMu.Lock()
	defer wc.hcMu.Unlock()
	return wc.p
}

func (wc *wsConn) hubConn() *hub.Conn {
	wc.hcMu.Lock()
	defer wc.hcMu.Unlock()
	return wc.hc
}

func (wc *wsConn) serve() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	rest, ok := wc.awaitHello(ctx)
	if !ok {
		return
	}
	hc := wc.hubConn()
	defer hc.Close()

	var wg, pings sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); defer cancel(); wc.writeLoop(ctx, hc, &pings) }()
	defer pings.Wait()
	defer wg.Wait()
	defer cancel()

	for _, f := range rest {
		wc.handle(ctx, f)
	}
	for {
		typ, msg, err := wc.ws.Read(ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			wc.replyErr(0, wire.Errorf(wire.CodeBadRequest, "frames are UTF-8 JSON text messages"))
			continue
		}
		for f := range bytes.SplitSeq(msg, []byte{'\n'}) {
			if len(bytes.TrimSpace(f)) > 0 {
				wc.handle(ctx, f)
			}
		}
	}
}

// awaitHello reads until a valid hello or the hello timeout. Commands before
// hello get hello_required; a bad token closes with 4401. It returns frames
// that followed hello in the same message.
func (wc *wsConn) awaitHello(ctx context.Context) ([][]byte, bool) {
	// Not a deadline on Read: coder/websocket cuts the socket when a read's
	// context ends, and this close must say why.
	late := time.AfterFunc(wc.s.opts.HelloTimeout, func() {
		wc.ws.Close(websocket.StatusPolicyViolation, "no hello in time")
	})
	defer late.Stop()
	for {
		typ, msg, err := wc.ws.Read(ctx)
		if err != nil {
			return nil, false
		}
		if typ != websocket.MessageText {
			wc.writeDirect(ctx, errorReply(0, wire.Errorf(wire.CodeBadRequest, "frames are UTF-8 JSON text messages")))
			continue
		}
		frames := bytes.Split(msg, []byte{'\n'})
		for i, f := range frames {
			if len(bytes.TrimSpace(f)) == 0 {
				continue
			}
			cmd, werr := decodeCommand(f)
			if werr != nil {
				wc.writeDirect(ctx, errorReply(cmd.ID, werr))
				continue
			}
			if cmd.Op != wire.OpHello {
				wc.writeDirect(ctx, errorReply(cmd.ID, wire.Errorf(wire.CodeHelloRequired, "send hello first")))
				continue
			}
			if !wc.hello(ctx, cmd) {
				return nil, false
			}
			return frames[i+1:], true
		}
	}
}

// hello authenticates, registers the connection with the hub, and queues the
// hello reply with one sub reply for each of cmd.Subs.
func (wc *wsConn) hello(ctx context.Context, cmd wire.Command) bool {
	p := wc.principal()
	if p.Role == "" {
		var ok bool
		p, ok = wc.s.authenticate(cmd.Token)
		if !ok {
			wc.ws.Close(StatusBadToken, "unknown or revoked token")
			return false
		}
	}
	// Presence names a bot by its name; others by the client they run.
	name := cmd.Client
	if name == "" || p.Role == RoleBot {
		name = p.Name
	}
	hc := wc.s.hub.Connect(hub.ConnInfo{Name: name, Role: p.Role})
	wc.hcMu.Lock()
	wc.hc, wc.p = hc, p
	wc.hcMu.Unlock()
	reply := wire.Reply{
		ID: cmd.ID, OK: true, Conn: hc.Info().ID, Boot: wc.s.opts.Boot, Version: wire.Version,
		HeartbeatMS: wc.s.opts.Heartbeat.Milliseconds(),
	}
	if len(cmd.Subs) == 0 {
		hc.ReplyJSON(reply)
		return true
	}
	if len(cmd.Subs) > wc.s.hub.MaxChannels() {
		reply.OK, reply.Error = false, wire.Errorf(wire.CodeTooMany, "hello has %d subs; the limit is %d", len(cmd.Subs), wc.s.hub.MaxChannels())
		hc.ReplyJSON(reply)
		return true
	}
	// Subs outside the token's scope are refused one by one; the rest go on.
	var allowed []wire.Sub
	refused := make([]*wire.Error, len(cmd.Subs))
	for i, sb := range cmd.Subs {
		if werr := authorize(p, "ws:"+wire.OpSub, sb.Session); werr != nil {
			refused[i] = werr
			continue
		}
		allowed = append(allowed, sb)
	}
	hc.Subscribe(ctx, allowed, func(rs []wire.SubReply) any {
		reply.Subs = make([]wire.SubReply, len(cmd.Subs))
		for i, sb := range cmd.Subs {
			if refused[i] != nil {
				reply.Subs[i] = wire.SubReply{Session: sb.Session, Error: refused[i]}
				continue
			}
			reply.Subs[i], rs = rs[0], rs[1:]
		}
		return reply
	})
	return true
}

// writeDirect writes one frame before the writer goroutine exists.
func (wc *wsConn) writeDirect(ctx context.Context, v any) {
	b, _ := json.Marshal(v)
	wctx, cancel := context.WithTimeout(ctx, wc.s.opts.WriteTimeout)
	defer cancel()
	_ = wc.ws.Write(wctx, websocket.MessageText, b)
}

// writeLoop pulls batches of frames from the hub and writes each as one
// message. A write that cannot finish within the write timeout means the
// peer accepts nothing: the connection is closed as "slow". The loop also
// sends the heartbeat pings. An idle connection holds no batch buffer (they
// come from a pool) and no goroutine besides its reader and this one.
func (wc *wsConn) writeLoop(ctx context.Context, hc *hub.Conn, pings *sync.WaitGroup) {
	beat := time.NewTicker(wc.s.opts.Heartbeat)
	defer beat.Stop()
	var pinging atomic.Bool
	// The write timeout is one timer per connection, armed around each
	// write, rather than a context per write: coder/websocket watches a
	// write's context with a context.AfterFunc, and at one small batch per
	// event (a steady rate, many viewers) making and watching those
	// contexts was a tenth of the daemon's CPU. Writes get a context that
	// never ends; the timer cuts the connection, which ends the write, and
	// so does the end of ctx (the reader has gone), once for the connection.
	stop := context.AfterFunc(ctx, func() { wc.ws.CloseNow() })
	defer stop()
	var slow atomic.Bool
	deadline := time.AfterFunc(time.Hour, func() {
		slow.Store(true)
		wc.ws.CloseNow()
	})
	deadline.Stop()
	defer deadline.Stop()
	for {
		select {
		case r := <-wc.closeReq:
			wc.sayBye(ctx, r)
			return
		default:
		}
		bp := wc.s.bufs.Get().(*[]byte)
		buf, err := hc.Fill(ctx, (*bp)[:0], wc.s.opts.MaxBatch)
		if err != nil {
			wc.s.bufs.Put(bp)
			if ctx.Err() == nil {
				wc.s.log.Error("fill", "conn", hc.Info().ID, "err", err)
				wc.ws.Close(websocket.StatusInternalError, "internal error")
			}
			return
		}
		if len(buf) > 0 {
			deadline.Reset(wc.s.opts.WriteTimeout)
			err := wc.ws.Write(context.Background(), websocket.MessageText, buf)
			deadline.Stop()
			*bp = buf
			wc.s.bufs.Put(bp)
			if err != nil {
				if slow.Load() {
					wc.s.log.Warn("closing slow connection", "conn", hc.Info().ID, "timeout", wc.s.opts.WriteTimeout)
					wc.ws.Close(websocket.StatusPolicyViolation, "slow")
				}
				return
			}
			continue
		}
		wc.s.bufs.Put(bp)
		select {
		case <-hc.Wake():
		case r := <-wc.closeReq:
			wc.sayBye(ctx, r)
			return
		case <-beat.C:
			// A ping waits for its pong, so it runs beside the writer; a
			// peer that does not answer within the next interval is gone.
			if pinging.CompareAndSwap(false, true) {
				pings.Add(1)
				go func() {
					defer pings.Done()
					defer pinging.Store(false)
					pctx, cancel := context.WithTimeout(ctx, wc.s.opts.Heartbeat)
					defer cancel()
					if wc.ws.Ping(pctx) != nil && ctx.Err() == nil {
						wc.ws.CloseNow()
					}
				}()
			}
		case <-ctx.Done():
			return
		}
	}
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
