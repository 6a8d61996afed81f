package api

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// A storm of reconnects is websocket upgrades, and net/http's way to one
// was a quarter of a storm's cost to the daemon: a connection and a
// request with their contexts, buffers and header map, echo's context and
// chain, all garbage once the websocket hijacks the connection. So the
// listener the http.Server is given (Server.Listener, without TLS) reads
// each connection's first request itself. An upgrade to /v1/ws that every
// check of the echo chain lets through (upgradeAllowed) is served here,
// straight to ws.Server.Serve. Anything else goes to net/http with the
// bytes read, which it reads again as if from the socket: another route, a
// request this parser does not take as it is (upgrade_request.go), and an
// upgrade that would be refused, for whatever reason, at whatever step
// before the 101. So there is one way to be refused, net/http's and echo's,
// word for word; this path writes nothing but a 101.
//
// Over TLS the listener is net/http's as before: the bytes it would read
// are the handshake's.

// readHeaderTimeout is how long a connection's first request may take to
// come whole, here and in net/http (HTTPServer): past it the connection
// is closed without an answer, as net/http closes it.
const readHeaderTimeout = 10 * time.Second

// upgradeHeaderMax bounds the header read here: a longer one (a hello in
// the header near its bound, say) goes to net/http, which bounds its own.
const upgradeHeaderMax = 8 << 10

var upgradeBufs = sync.Pool{New: func() any { b := make([]byte, upgradeHeaderMax); return &b }}

// upgradeListener yields to net/http the connections whose first request
// it does not serve itself. Its accept loop runs on a goroutine of its
// own, and each connection's first request is read on one of its own, so
// that a slow client holds nobody else up.
type upgradeListener struct {
	net.Listener // the gated listener (gatedListener)
	s            *Server

	toHTTP chan net.Conn
	done   chan struct{} // closed when the accept loop ends
	err    error         // why it ended, once done is closed

	// reading is the connections whose first request is being read, which
	// Close closes, as http.Server's Close closes those it was reading.
	mu      sync.Mutex
	reading map[net.Conn]struct{}
	closed  bool
}

func newUpgradeListener(s *Server, ln net.Listener) *upgradeListener {
	l := &upgradeListener{Listener: ln, s: s, toHTTP: make(chan net.Conn), done: make(chan struct{}), reading: map[net.Conn]struct{}{}}
	go l.acceptLoop()
	return l
}

// Close stops the accept loop and closes the connections whose first
// request is being read, as http.Server's Close closes those it reads.
// (Its Shutdown gives one younger than 5 s its time; a client whose
// request is cut here by a daemon that stops connects again.)
func (l *upgradeListener) Close() error {
	l.mu.Lock()
	l.closed = true
	for c := range l.reading {
		c.Close()
	}
	l.mu.Unlock()
	return l.Listener.Close()
}

// track adds c to the connections being read; false if the listener is
// closed.
func (l *upgradeListener) track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.reading[c] = struct{}{}
	return true
}

// untrack takes c out of the connections being read.
func (l *upgradeListener) untrack(c net.Conn) {
	l.mu.Lock()
	delete(l.reading, c)
	l.mu.Unlock()
}

// Accept returns the next connection for net/http.
func (l *upgradeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.toHTTP:
		return c, nil
	case <-l.done:
		return nil, l.err
	}
}

// acceptLoop accepts until the listener fails for good, backing off on a
// temporary failure as net/http's loop does.
func (l *upgradeListener) acceptLoop() {
	defer close(l.done)
	var delay time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Temporary() { //nolint:staticcheck // net/http's own test, so that it backs off as it did
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				l.s.log.Warn("accept", "err", err, "retry_in", delay)
				time.Sleep(delay)
				continue
			}
			l.err = err
			return
		}
		delay = 0
		tc, ok := c.(*openTCPConn)
		switch {
		case !ok:
			go l.handOver(c, nil)
		case !l.track(c):
			c.Close()
		default:
			// Fresh until its request is whole, from now, as net/http
			// counts it before its goroutine starts: the gate's next
			// look for room must see it. Its header is due within
			// readHeaderTimeout of now, whoever reads it.
			tc.headerBy = time.Now().Add(readHeaderTimeout)
			l.s.fresh.connState(c, http.StateNew)
			go l.first(tc)
		}
	}
}

// first reads c's first request's header and serves it if it is an
// upgrade this path takes; else it hands c to net/http.
func (l *upgradeListener) first(c *openTCPConn) {
	bp, n, err := readFirstHeader(c)
	l.untrack(c)
	if err != nil || c.req.whole.Load() {
		// No longer fresh: closed, or its header is whole, as when
		// net/http hands a request to the handler. One whose header is
		// not whole goes to net/http in its place among the fresh, and
		// with its age: net/http's StateNew finds it counted.
		l.s.fresh.drop(c)
	}
	if err != nil {
		c.Close() // nothing came in time, or the peer is gone: net/http would answer nothing either
		return
	}
	b := (*bp)[:n]
	if l.serveUpgrade(c, b) {
		upgradeBufs.Put(bp)
		return
	}
	pending := bytes.Clone(b)
	upgradeBufs.Put(bp)
	l.handOver(c, pending)
}

// handOver gives c to net/http, which reads pending first.
func (l *upgradeListener) handOver(c net.Conn, pending []byte) {
	if tc, ok := c.(*openTCPConn); ok {
		tc.pending = pending
		_ = tc.SetReadDeadline(time.Time{}) // net/http sets its own, held to headerBy
	}
	select {
	case l.toHTTP <- c:
	case <-l.done:
		c.Close() // the server is closing
	}
}

// serveUpgrade serves b, the bytes read of c so far, if they are a whole
// request that upgradeRequest parses and every check passes, saying
// whether it did: false leaves c untouched but for what was read.
func (l *upgradeListener) serveUpgrade(c *openTCPConn, b []byte) bool {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		return false
	}
	r, ok := upgradeRequest(b[:end+4])
	if !ok {
		return false
	}
	r.RemoteAddr = c.RemoteAddr().String()
	p, authed, ok := l.s.upgradeAllowed(r)
	if !ok {
		return false
	}
	_ = c.SetReadDeadline(time.Time{}) // as net/http clears it at a hijack
	w := &upgradeWriter{conn: c, rest: b[end+4:]}
	err := l.s.ws.Serve(w, r, p, authed)
	return err == nil && w.hijacked
}

// readFirstHeader reads c until what it read cannot begin an upgrade this
// path takes, holds a header's end, or fills a buffer, by its
// headerBy. It holds no buffer while it waits.
func readFirstHeader(c *openTCPConn) (bp *[]byte, n int, err error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, 0, err
	}
	if err := c.SetReadDeadline(c.headerBy); err != nil {
		return nil, 0, err
	}
	var rn int
	var rerr error
	read := func(fd uintptr) bool {
		if bp == nil {
			bp = upgradeBufs.Get().(*[]byte)
		}
		for {
			rn, rerr = syscall.Read(int(fd), (*bp)[n:])
			if rerr != syscall.EINTR {
				break
			}
		}
		if rerr == syscall.EAGAIN {
			if n == 0 {
				upgradeBufs.Put(bp)
				bp = nil
			}
			return false
		}
		return true
	}
	for {
		err := rc.Read(read)
		if err == nil && rerr != nil {
			err = rerr
		}
		if err == nil && rn <= 0 {
			err = io.EOF
		}
		if err != nil {
			if bp != nil {
				upgradeBufs.Put(bp)
			}
			return nil, 0, err
		}
		c.req.saw((*bp)[n : n+rn])
		n += rn
		if b := (*bp)[:n]; !mayBeUpgrade(b) || endsHeader(b) || n == len(*bp) {
			return bp, n, nil
		}
	}
}
