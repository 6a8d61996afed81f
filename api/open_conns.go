package api

import (
	"bytes"
	"net"
	"sync/atomic"
	"syscall"
	"time"
)

// openConns bounds the connections the daemon holds open at once, below
// the file descriptors it may open: a daemon that ran out of them could
// not open its store's files or connections, nor reach a provider, and
// every accept would fail until some client left. At the bound it
// accepts no more until a connection closes; new ones wait in the
// kernel's listen queue meanwhile, in the order they came, as past the
// fresh connections' bound (gate.go).
//
// Every connection the listener accepts counts, from its accept until its
// Close, whoever closes it: net/http, or the websocket that hijacked it.
// Its methods may be called from any goroutine.
type openConns struct {
	max   int64
	n     atomic.Int64
	freed chan struct{} // poked when one closes
}

func newOpenConns(max int) *openConns {
	return &openConns{max: int64(max), freed: make(chan struct{}, 1)}
}

// room returns once fewer than max connections are open, or once stop is
// closed. Only the accept loop calls it: a poke that comes while nobody
// waits is kept for the next wait, which then looks again.
func (o *openConns) room(stop <-chan struct{}) {
	for o.n.Load() >= o.max {
		select {
		case <-o.freed:
		case <-stop:
			return
		}
	}
}

// track counts c open until its first Close.
func (o *openConns) track(c net.Conn) net.Conn {
	o.n.Add(1)
	if tc, ok := c.(*net.TCPConn); ok {
		// The TCP connection itself, so that what net/http and the
		// websocket ask of one (its descriptor, CloseWrite, ReadFrom for
		// sendfile) is still there.
		return &openTCPConn{TCPConn: tc, open: o}
	}
	return &openConn{Conn: c, open: o}
}

// release counts one connection closed.
func (o *openConns) release() {
	o.n.Add(-1)
	select {
	case o.freed <- struct{}{}:
	default:
	}
}

// Open returns how many connections the listener holds open now.
func (o *openConns) Open() int { return int(o.n.Load()) }

type openTCPConn struct {
	*net.TCPConn
	open   *openConns
	closed atomic.Bool
	req    requestProgress
	// pending is what the upgrade listener read of the first request and
	// gave back (upgrades.go), read before the socket; its reader owns it.
	pending []byte
	// headerBy, set by the upgrade listener at the accept, is when the
	// first request's header must have come whole: net/http's own
	// ReadHeaderTimeout, counted from when it starts to read, is held to
	// it (SetReadDeadline), so that the time the listener spent reading
	// first is not given again.
	headerBy time.Time
}

// SetReadDeadline is the socket's, but no later than headerBy while the
// first request's header is not whole.
func (c *openTCPConn) SetReadDeadline(t time.Time) error {
	if !c.headerBy.IsZero() && !c.req.whole.Load() && (t.IsZero() || t.After(c.headerBy)) {
		t = c.headerBy
	}
	return c.TCPConn.SetReadDeadline(t)
}

// TakeBuffered returns, and forgets, what is left of pending: bytes read
// of the socket that its next reader must have first. The websocket's
// socket takes them at a hijack, as it reads the descriptor itself
// (api/ws's leanHijacker).
func (c *openTCPConn) TakeBuffered() []byte {
	b := c.pending
	c.pending = nil
	return b
}

func (c *openTCPConn) Read(b []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(b, c.pending) // seen by req when it was read
		if c.pending = c.pending[n:]; len(c.pending) == 0 {
			c.pending = nil
		}
		return n, nil
	}
	n, err := c.TCPConn.Read(b)
	c.req.saw(b[:n])
	return n, err
}

func (c *openTCPConn) request() *requestProgress { return &c.req }

func (c *openTCPConn) Close() error {
	err := c.TCPConn.Close()
	if c.closed.CompareAndSwap(false, true) {
		c.open.release() // after the descriptor is let go
	}
	return err
}

type openConn struct {
	net.Conn
	open   *openConns
	closed atomic.Bool
	req    requestProgress
}

func (c *openConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.req.saw(b[:n])
	return n, err
}

func (c *openConn) request() *requestProgress { return &c.req }

func (c *openConn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		c.open.release()
	}
	return err
}

// fdBound is the default bound on open connections (connsUnder the
// file descriptor limit).
func fdBound() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return connsUnder(1024)
	}
	return connsUnder(lim.Cur)
}

// connsUnder is the bound on open connections under a limit of files:
// the limit less a reserve for the daemon's own (the store's files and
// its pool's connections, NATS, the log, the connections turns open to
// providers): a thirty-second of it, and at least 128 or, under a limit
// of 512, a quarter.
func connsUnder(files uint64) int {
	n := int64(min(files, 1<<31)) // RLIM_INFINITY, say
	return int(max(n-max(n/32, min(128, n/4)), 1))
}

// peopleReserve is the part of a bound on open connections kept for
// owners and members, which links, guests and bots may not take, and the
// default share of one token: an eighth of it, at least 4.
func peopleReserve(bound int) int { return max(bound/8, 4) }

// requestProgress follows the reads of a connection until its first
// request's header has been read whole, for the fresh connections' bound
// (fresh_conns.go): when bytes were last read, and whether the blank line
// that ends a header (CRLF CRLF, or LF LF, as net/http takes it) has
// come. Reads after that cost an atomic load.
type requestProgress struct {
	whole  atomic.Bool
	last   atomic.Int64 // unix nanoseconds of the last read that returned bytes
	served atomic.Bool  // the handler has seen its first request
	tail   [2]byte      // the last bytes read, owned by the reader
	tailN  int
}

// saw records b, just read.
func (p *requestProgress) saw(b []byte) {
	if len(b) == 0 || p.whole.Load() {
		return
	}
	p.last.Store(time.Now().UnixNano())
	// Look at the tail of what came before and the start of b, then b.
	var joint [4]byte
	j := append(append(joint[:0], p.tail[:p.tailN]...), b[:min(len(b), 2)]...)
	if endsHeader(j) || endsHeader(b) {
		p.whole.Store(true)
		return
	}
	for _, c := range b[max(len(b)-2, 0):] {
		if p.tailN == 2 {
			p.tail[0], p.tailN = p.tail[1], 1
		}
		p.tail[p.tailN] = c
		p.tailN++
	}
}

// endsHeader says whether b holds the blank line that ends a header.
func endsHeader(b []byte) bool {
	return bytes.Contains(b, []byte("\n\r\n")) || bytes.Contains(b, []byte("\n\n"))
}

// state says whether the header has come whole, and when bytes were last
// read (zero if none yet).
func (p *requestProgress) state() (whole bool, last time.Time) {
	if p.whole.Load() {
		return true, time.Time{}
	}
	if n := p.last.Load(); n != 0 {
		return false, time.Unix(0, n)
	}
	return false, time.Time{}
}
