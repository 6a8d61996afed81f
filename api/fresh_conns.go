package api

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"albedo/api/ws"
)

// freshGrace is how long a fresh connection that has sent nothing keeps
// its place at the bound whatever it did; past it, one with nothing
// unread is closed to make room. It is long because the clients of a
// storm of reconnects are slow to send their requests too: a machine
// running thousands of them (a load tool, a server of bots) is as busy as
// the daemon, and a client closed before its request came loses a backoff
// step. One whose request waits unread in its socket keeps its place
// however long: the daemon has not got to it, and a daemon behind that
// closed what it had not read made every client of a storm come again.
const freshGrace = time.Second

// partialGrace is how long a fresh connection keeps its place once the
// daemon has read part of its request's header and nothing since: an
// honest client writes its request at once, so the rest, if the network
// split it, is at most a round trip behind. A connection that sends its
// header a byte at a time is closed this soon at the bound, not held for
// the header timeout. Over TLS the daemon cannot see where the header
// ends (its bytes are the handshake's and the records'), and such a
// connection has freshGrace from its last read instead.
const partialGrace = 20 * time.Millisecond

// freshConns is the connections whose request has not come whole yet,
// oldest first: from the accept until net/http hands their first request
// to the handler (handler), or until they are hijacked, idle or closed;
// or, for those the upgrade listener reads first (upgrades.go), until it
// has read their request's header.
// Its methods may be called from any goroutine.
type freshConns struct {
	max    int
	left   chan struct{}       // poked when one stops being fresh
	unread func(net.Conn) bool // whether c has bytes waiting; nil: the socket's (ws.Unread)

	closed atomic.Int64 // connections closed to make room (idlest)
	shed   atomic.Int64 // connections closed at accept for a header begun and not ended (gatedListener)

	mu    sync.Mutex
	conns []freshConn
	// in is conns as a set: most drops are of a connection that is not
	// among them (served already), found so without a pass over them.
	in map[net.Conn]struct{}
	// scanAt is when room may next look for one to close. A look that
	// found none costs a system call for each fresh connection past its
	// grace, and in a storm the daemon is behind on all of them: looking
	// again at every accept made the accept loop's cost grow with the
	// square of the storm.
	scanAt time.Time
}

type freshConn struct {
	c  net.Conn
	at time.Time
}

// room returns once fewer than max connections are fresh: when one's
// request is served, or when one can be closed to make room (idlest); or
// once stop is closed.
func (f *freshConns) room(stop <-chan struct{}) { f.roomWithin(stop, -1) }

// roomWithin is room that gives up after limit (if not negative), saying
// whether there is room; with 0 it does not wait, but closes one to make
// room if one can be closed now.
func (f *freshConns) roomWithin(stop <-chan struct{}, limit time.Duration) bool {
	var end time.Time
	if limit >= 0 {
		end = time.Now().Add(limit)
	}
	f.mu.Lock()
	for len(f.conns) >= f.max {
		now := time.Now()
		wait := f.scanAt.Sub(now)
		if wait <= 0 {
			var i int
			if i, wait = f.idlest(now); i >= 0 {
				old := f.conns[i].c
				f.remove(i)
				f.mu.Unlock()
				f.closed.Add(1)
				old.Close()
				f.mu.Lock()
				continue
			}
			f.scanAt = now.Add(wait)
		}
		if !end.IsZero() {
			if !now.Before(end) {
				f.mu.Unlock()
				return false
			}
			wait = min(wait, end.Sub(now))
		}
		f.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-f.left:
		case <-t.C:
		case <-stop:
			t.Stop()
			return false
		}
		t.Stop()
		f.mu.Lock()
	}
	f.mu.Unlock()
	return true
}

// idlest returns the fresh connection to close to make room, oldest
// first: one past its grace (standing) that has nothing unread. With none
// (-1), wait says when to look again. Caller holds f.mu.
func (f *freshConns) idlest(now time.Time) (i int, wait time.Duration) {
	wait = freshGrace
	for i, fc := range f.conns {
		since, grace, ok := standing(fc, now)
		switch {
		case !ok:
		case since < grace:
			wait = min(wait, grace-since)
		case f.hasUnread(fc.c):
			wait = min(wait, freshGrace/5) // what is unread now may be read by then
		default:
			return i, 0
		}
	}
	return -1, wait
}

// standing says how long a fresh connection has been waited for (since,
// counted from its accept or from the last bytes read of it) and how long
// it may be (grace); ok is false for one whose request's header has been
// read whole: it is about to be served.
func standing(fc freshConn, now time.Time) (since, grace time.Duration, ok bool) {
	p, sealed := requestOf(fc.c)
	if p == nil {
		return now.Sub(fc.at), freshGrace, true
	}
	whole, last := p.state()
	switch {
	case whole && !sealed:
		return 0, 0, false
	case last.IsZero():
		return now.Sub(fc.at), freshGrace, true
	case sealed:
		return now.Sub(last), freshGrace, true
	}
	return now.Sub(last), partialGrace, true
}

func (f *freshConns) hasUnread(c net.Conn) bool {
	if f.unread != nil {
		return f.unread(c)
	}
	return ws.Unread(c)
}

// connState is the http.Server's ConnState hook. Past max (several
// listeners may each have found room) the oldest is closed at once. A
// connection that net/http has begun to read (active) stays fresh until
// its request is whole and served (handler).
func (f *freshConns) connState(c net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		if known, _ := requestOf(c); known != nil && known.whole.Load() {
			return // its header was whole at accept (gatedListener): it is not waited for
		}
		f.mu.Lock()
		if _, counted := f.in[c]; counted {
			// Counted from its accept by the upgrade listener, which read
			// part of its request and handed it on (upgrades.go): it
			// keeps its place and its age.
			f.mu.Unlock()
			return
		}
		var evict net.Conn
		f.conns = append(f.conns, freshConn{c, time.Now()})
		if f.in == nil {
			f.in = map[net.Conn]struct{}{}
		}
		f.in[c] = struct{}{}
		if len(f.conns) > f.max {
			evict = f.conns[0].c
			f.remove(0)
		}
		f.mu.Unlock()
		if evict != nil {
			evict.Close()
		}
	case http.StateActive:
	default: // idle, hijacked or closed: no longer fresh
		f.drop(c)
	}
}

// drop takes c out of the fresh connections, if it is one.
func (f *freshConns) drop(c net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, fresh := f.in[c]; !fresh {
		return
	}
	if i := slices.IndexFunc(f.conns, func(fc freshConn) bool { return fc.c == c }); i >= 0 {
		f.remove(i)
		select {
		case f.left <- struct{}{}:
		default:
		}
	}
}

// handler wraps the daemon's handler: a connection whose request reaches
// it is no longer fresh. Only its first request can find it fresh; a
// connection kept alive left at its first idle.
func (f *freshConns) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := r.Context().Value(connKey{}).(net.Conn); ok && fresh(c) {
			f.drop(c)
		}
		next.ServeHTTP(w, r)
	})
}

// fresh says whether c may still be among the fresh connections: one
// whose request was tracked and served before is not.
func fresh(c net.Conn) bool {
	p, _ := requestOf(c)
	return p == nil || !p.served.Swap(true)
}

// requestOf returns the progress of c's first request (nil for a
// connection the listener did not track) and whether c is TLS, whose
// progress is of its records, not of its request.
func requestOf(c net.Conn) (p *requestProgress, sealed bool) {
	if tc, ok := c.(*tls.Conn); ok {
		c, sealed = tc.NetConn(), true
	}
	if t, ok := c.(interface{ request() *requestProgress }); ok {
		return t.request(), sealed
	}
	return nil, sealed
}

// connKey is the request context's key to its connection (withConn).
type connKey struct{}

// withConn is the http.Server's ConnContext: it gives every request of a
// connection the connection, for handler.
func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// headerSeen is what a connection's first bytes, peeked at accept, say of
// its request's header.
type headerSeen int

const (
	headerUnknown headerSeen = iota // nothing yet, or not HTTP's (TLS)
	headerPartial                   // begun and not ended
	headerWhole                     // ended, or longer than a peek
)

// classifyHeader says what b, the first bytes of a connection, say; full
// is true when b filled the peek's buffer.
func classifyHeader(b []byte, full bool) headerSeen {
	switch {
	case len(b) == 0 || b[0] < 'A' || b[0] > 'Z': // a method's first letter, or not HTTP/1
		return headerUnknown
	case full || endsHeader(b):
		return headerWhole
	}
	return headerPartial
}

// remove takes the i-th fresh connection out. Caller holds f.mu.
func (f *freshConns) remove(i int) {
	delete(f.in, f.conns[i].c)
	f.conns = slices.Delete(f.conns, i, i+1)
}
