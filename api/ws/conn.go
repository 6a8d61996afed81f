package ws

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/coder/websocket"

	"albedo/hub"
	"albedo/hub/access"
	"albedo/wire"
)

// errConnDone ends a connection's reader and writer once either stops for
// a reason that is not an error (a bye written, the daemon closing), so
// that the other stops too.
var errConnDone = errors.New("connection done")

// conn is one websocket connection: a reader goroutine (read) for its
// life, and a writer (writer.go) that runs only while there is something
// to write.
type conn struct {
	// static after construction
	s    *Server
	ws   *websocket.Conn
	lean *leanConn // ws's socket, if it is a lean one (socket.go)
	// handling is set while the reader runs the commands of a message:
	// what the peer sent after them may wait in the daemon's buffers.
	handling atomic.Bool

	preHello bool             // counted in Server.preHello until hello
	early    *wire.Command    // the hello the upgrade's request carried, if any: serve runs it at once
	shared   bool             // counted against sharedAs's share (shares.go) since hello
	sharedAs access.Principal // set by hello, read by the reader at its end

	// set by serve before it reads; its end stops the reader and the writer
	ctx    context.Context
	cancel func()

	hcMu sync.Mutex
	hc   *hub.Conn        // set by the reader at hello; read by bye
	w    *writer          // set with hc
	p    access.Principal // from the header, or from hello; read by revocation

	closeOnce sync.Once
	closeReq  chan closeReq // capacity 1: bye asks the writer to write bye next, and close

	// inputs in flight (inputs.go): slots is made and filled by the
	// reader and emptied by the receipts' callbacks; so is inflight, which
	// the reader waits on
	slots    chan struct{}  // one per input not answered yet; made on the first input
	inflight sync.WaitGroup // inputs whose receipt is not queued yet
}

type closeReq struct {
	code   websocket.StatusCode
	reason string
	bye    []byte // the last frame before the close
}

// bye queues a bye push and asks the writer to close once it is written.
func (wc *conn) bye(reason string, retryAfter time.Duration) {
	code := websocket.StatusGoingAway
	if reason == wire.ByeRestart || reason == wire.ByeDrain {
		code = websocket.StatusServiceRestart
	}
	wc.closeOnce.Do(func() {
		if wc.hubConn() == nil {
			// Still waiting for hello: there is no writer to flush.
			go wc.ws.Close(code, "daemon "+reason)
			return
		}
		bye := wire.Encode(wire.ByePush{Op: wire.PushBye, Reason: reason, RetryAfterMS: retryAfter.Milliseconds()})
		wc.closeReq <- closeReq{code, "daemon " + reason, bye}
		wc.writer().kick()
	})
}

func (wc *conn) principal() access.Principal {
	wc.hcMu.Lock()
	defer wc.hcMu.Unlock()
	return wc.p
}

func (wc *conn) hubConn() *hub.Conn {
	wc.hcMu.Lock()
	defer wc.hcMu.Unlock()
	return wc.hc
}

func (wc *conn) writer() *writer {
	wc.hcMu.Lock()
	defer wc.hcMu.Unlock()
	return wc.w
}

// serve waits for hello (or runs the one the upgrade carried), then hands
// the connection to a reader goroutine of its own (read) and returns. It
// owns the connection's count in s.wg until then. A hello goes deep (its
// sessions are loaded from the database), and a goroutine keeps the stack
// it grew to while it lives: the reader, which an idle connection keeps
// for its whole life, starts small instead.
func (wc *conn) serve() {
	wc.ctx, wc.cancel = context.WithCancel(context.Background())
	var rest [][]byte
	ok := false
	if wc.early != nil {
		ok = wc.hello(wc.ctx, *wc.early)
		wc.early = nil
	} else {
		rest, ok = wc.awaitHello(wc.ctx)
	}
	if wc.preHello {
		wc.s.leavePreHello()
	}
	if !ok {
		// coder/websocket leaves the socket open after a failed read (a
		// peer gone before its hello): closed here, or it would hold its
		// descriptor, and a place among the daemon's open connections,
		// for ever.
		wc.ws.CloseNow()
		wc.cancel()
		wc.s.unregister(wc)
		wc.s.wg.Done()
		return
	}
	go wc.read(rest)
}

// read reads commands until the connection ends; the writer (writer.go)
// runs beside it only while there is something to write. A writer that
// fails ends the connection's context and so the reader; a reader that
// stops ends it for the writer; read returns after both, as derp's run
// does, and then lets the server's count of the connection go.
func (wc *conn) read(rest [][]byte) {
	defer wc.s.wg.Done()
	defer wc.s.unregister(wc)
	defer wc.giveShare()
	defer wc.cancel()
	// The end of ctx cuts a write in progress too.
	defer context.AfterFunc(wc.ctx, func() { wc.ws.CloseNow() })()
	hc, w := wc.hubConn(), wc.writer()
	defer hc.Close()
	_ = wc.readLoop(wc.ctx, rest)
	wc.cancel()
	w.close()
}

// readLoop runs the commands that followed hello in its message, then
// every command that arrives, until the connection ends. Before each
// command it waits for room among the connection's unsent replies
// (hub.Conn.AwaitRoom): a client that does not read its replies is not
// read either.
func (wc *conn) readLoop(ctx context.Context, rest [][]byte) error {
	if err := wc.handleAll(ctx, rest); err != nil {
		return err
	}
	// The socket is read under a context that never ends: given one that
	// can, coder/websocket arms a context.AfterFunc for every message it
	// reads (an allocation and a registration with the context, for
	// every message). The end of ctx closes the socket (read), which ends
	// a read in progress all the same.
	rctx := context.WithoutCancel(ctx)
	for {
		if wc.s.beforeRead != nil {
			wc.s.beforeRead()
		}
		if wc.lean != nil {
			wc.lean.await() // the wait for the next message, shallow (socket_await.go)
		}
		typ, r, err := wc.ws.Reader(rctx)
		if err != nil {
			return err
		}
		// The message is read into a pooled buffer, as ws.Read would read
		// it into a new one: its commands are decoded into strings of
		// their own, so nothing keeps it once they have run.
		bp := wc.s.bufs.Get().(*[]byte)
		msg, err := readMessage(r, (*bp)[:0])
		if err == nil {
			switch {
			case typ != websocket.MessageText:
				if err = wc.hc.AwaitRoom(ctx); err == nil {
					wc.replyErr(0, wire.Errorf(wire.CodeBadRequest, "frames are UTF-8 JSON text messages"))
				}
			case !utf8.Valid(msg):
				wc.closeNotUTF8()
				err = errNotUTF8
			default:
				err = wc.handleAll(ctx, splitFrames(msg))
			}
		}
		if cap(msg) <= maxPooledMessage {
			*bp = msg[:0]
			wc.s.bufs.Put(bp)
		}
		if err != nil {
			return err
		}
	}
}

// behind says whether the daemon, not the peer, may be why a ping went
// unanswered: its reader is running the peer's commands (a pong that
// came with them waits in the daemon's own buffers), or the peer's bytes
// wait unread in the socket (its reader waits for the CPU). A peer can
// keep neither up: the reader drains the socket between commands.
func (wc *conn) behind() bool {
	return wc.handling.Load() || wc.lean != nil && Unread(wc.lean.Conn)
}

// errNotUTF8 ends a connection whose peer sent a text message that is not
// UTF-8.
var errNotUTF8 = errors.New("websocket: a text message that is not UTF-8")

// closeNotUTF8 closes the connection as RFC 6455 says (8.1) of a text
// message that is not UTF-8: with 1007. coder/websocket does not check
// the text it reads.
func (wc *conn) closeNotUTF8() {
	wc.ws.Close(websocket.StatusInvalidFramePayloadData, "a text message that is not UTF-8")
}

// maxPooledMessage bounds the buffers readLoop gives back to the pool: a
// rare large message does not stay in memory.
const maxPooledMessage = 64 << 10

// readMessage is io.ReadAll into b: what is left of r, appended to b.
func readMessage(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
	}
}

// handleAll runs the commands of one message, in order, marked as
// handling meanwhile.
func (wc *conn) handleAll(ctx context.Context, frames [][]byte) error {
	wc.handling.Store(true)
	defer wc.handling.Store(false)
	if wc.s.beforeHandle != nil {
		wc.s.beforeHandle()
	}
	for _, f := range frames {
		if err := wc.hc.AwaitRoom(ctx); err != nil {
			return err
		}
		wc.handle(ctx, f)
	}
	return nil
}

// awaitHello reads until a valid hello or the hello timeout. Commands before
// hello get hello_required; a bad token closes with 4401. It returns frames
// that followed hello in the same message.
func (wc *conn) awaitHello(ctx context.Context) ([][]byte, bool) {
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
		if !utf8.Valid(msg) {
			wc.closeNotUTF8()
			return nil, false
		}
		frames := splitFrames(msg)
		for i, f := range frames {
			cmd, werr := decodeCommand(f)
			if werr != nil {
				wc.writeDirect(ctx, errorReply(cmd.ID, werr))
				continue
			}
			if cmd.Op == wire.OpProve {
				wc.writeDirect(ctx, wc.prove(cmd))
				continue
			}
			if cmd.Op != wire.OpHello {
				wc.writeDirect(ctx, errorReply(cmd.ID, wire.Errorf(wire.CodeHelloRequired, "send hello first")))
				continue
			}
			// The hello came: what is left is the daemon's to do. A
			// daemon behind (a storm of reconnects, its store slow)
			// that cut hellos it had read made each client come again
			// and pay for its hello twice.
			if !late.Stop() {
				return nil, false // too late: the close is under way
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
func (wc *conn) hello(ctx context.Context, cmd wire.Command) bool {
	p, ok := wc.helloPrincipal(cmd.Token)
	if !ok {
		return false
	}
	// Authenticated: it no longer waits for hello, before its reply can
	// tell the client so (a client that connects again on that reply
	// must find the room it left; TestPreHelloWebsocketsAreBounded).
	if wc.preHello {
		wc.preHello = false
		wc.s.leavePreHello()
	}
	// Presence names a connection by its token's identity; the client's
	// name is only the label of a device, bounded so that presence is.
	if len(cmd.Client) > wire.MaxClientBytes {
		wc.writeDirect(ctx, errorReply(cmd.ID, wire.Errorf(wire.CodeBadRequest,
			"hello's client is a device label of at most %d bytes, not %d", wire.MaxClientBytes, len(cmd.Client))))
		wc.ws.Close(websocket.StatusPolicyViolation, "client label too long")
		return false
	}
	if p.Role == wire.TokenGuest {
		name, werr := guestName(cmd.Name)
		if werr == nil {
			werr = wc.guestNameFree(ctx, name)
		}
		if werr != nil {
			wc.writeDirect(ctx, errorReply(cmd.ID, werr))
			wc.ws.Close(websocket.StatusPolicyViolation, "bad guest name")
			return false
		}
		p.Name = name
	}
	if werr := wc.s.takeShare(p); werr != nil {
		wc.writeDirect(ctx, errorReply(cmd.ID, werr))
		wc.ws.Close(StatusTryAgainLater, "too many connections for this token")
		return false
	}
	wc.shared, wc.sharedAs = true, p
	hc := wc.s.hub.Connect(hub.ConnInfo{Name: p.Name, Role: p.Role, AuthorID: p.AuthorID(), Device: cmd.Client})
	w := newWriter(wc.ctx, wc.cancel, wc, hc)
	hc.OnWake(w.kick)
	wc.hcMu.Lock()
	wc.hc, wc.w, wc.p = hc, w, p
	wc.hcMu.Unlock()
	reply := wire.Reply{
		ID: cmd.ID, OK: true, Conn: hc.Info().ID, Boot: wc.s.opts.Boot, Version: wire.Version,
		HeartbeatMS: wc.s.opts.Heartbeat.Milliseconds(), Role: p.Role,
	}
	if you := p.Author(); you.ID != "" {
		reply.You = &wire.Person{ID: you.ID, Name: you.Name, Role: p.Role}
	}
	if f := wc.s.opts.SessionToken; f != nil {
		reply.SessionToken = f(p)
	}
	// Only people list sessions (an owner all, a member theirs), so only
	// they hear of them.
	if cmd.Sessions && (p.Role == wire.TokenOwner || p.Role == wire.TokenMember) {
		hc.ListenSessions()
		reply.Sessions = true
	}
	wc.helloSubs(ctx, hc, cmd.Subs, reply)
	return true
}

// guestNameFree refuses a guest's name that is someone else's of the
// home (hub.GuestNameTaken).
func (wc *conn) guestNameFree(ctx context.Context, name string) *wire.Error {
	taken, err := wc.s.hub.GuestNameTaken(ctx, name)
	switch {
	case err != nil:
		return hub.AsError(wc.s.log, err, "op", wire.OpHello)
	case taken:
		return wire.Errorf(wire.CodeBadRequest, "a guest may not go by %q: it is a member's, a bot's or the daemon's; pick another name", name)
	}
	return nil
}

// guestName is the name a guest picked in hello, checked: at most
// wire.MaxGuestName bytes of printable text, trimmed; "guest" for none.
func guestName(name string) (string, *wire.Error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "guest", nil
	}
	if len(name) > wire.MaxGuestName || !utf8.ValidString(name) || strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return "", wire.Errorf(wire.CodeBadRequest, "a guest's name is 1-%d bytes of printable text", wire.MaxGuestName)
	}
	return name, nil
}

// giveShare gives back the share hello took, once the connection is over.
func (wc *conn) giveShare() {
	if wc.shared {
		wc.s.giveShare(wc.sharedAs)
	}
}

// helloPrincipal is the principal of the upgrade's header, or else of the
// token in hello; a connection whose token is unknown or revoked is
// closed with 4401.
func (wc *conn) helloPrincipal(token string) (access.Principal, bool) {
	p := wc.principal()
	if p.Role == "" {
		var ok bool
		p, ok = wc.s.opts.Authenticate(token)
		if !ok {
			wc.ws.Close(StatusBadToken, "unknown or revoked token")
			return p, false
		}
	}
	// Revocation closes the connections it finds by their principal, and
	// this one has been findable only since now: look the token up again,
	// so that one revoked (or narrowed) while this connection was being set
	// up is not missed.
	wc.hcMu.Lock()
	wc.p = p
	wc.hcMu.Unlock()
	cur, ok := wc.s.hub.Current(p)
	if !ok {
		wc.ws.Close(StatusBadToken, "token revoked")
		return p, false
	}
	return cur, true
}

// helloSubs subscribes hc to the subs of a hello and queues the hello's
// reply, with one sub reply for each.
func (wc *conn) helloSubs(ctx context.Context, hc *hub.Conn, subs []wire.Sub, reply wire.Reply) {
	if len(subs) == 0 {
		hc.ReplyJSON(reply)
		return
	}
	if len(subs) > wc.s.hub.MaxChannels() {
		reply.OK, reply.Error = false, wire.Errorf(wire.CodeTooMany, "hello has %d subs; the limit is %d", len(subs), wc.s.hub.MaxChannels())
		hc.ReplyJSON(reply)
		return
	}
	// Subs outside the token's scope are refused one by one; the rest go on.
	var allowed []wire.Sub
	refused := make([]*wire.Error, len(subs))
	for i, sb := range subs {
		if werr := wc.authorizeOp(wire.OpSub, sb.Session); werr != nil {
			refused[i] = werr
			continue
		}
		allowed = append(allowed, sb)
	}
	hc.Subscribe(ctx, allowed, func(rs []wire.SubReply) any {
		reply.Subs = make([]wire.SubReply, len(subs))
		for i, sb := range subs {
			if refused[i] != nil {
				reply.Subs[i] = wire.SubReply{Session: sb.Session, Error: refused[i]}
				continue
			}
			reply.Subs[i], rs = rs[0], rs[1:]
		}
		return reply
	})
}

// writeDirect writes one frame before the writer goroutine exists.
func (wc *conn) writeDirect(ctx context.Context, v any) {
	wctx, cancel := context.WithTimeout(ctx, wc.s.opts.WriteTimeout)
	defer cancel()
	_ = wc.ws.Write(wctx, websocket.MessageText, wire.Encode(v))
}
