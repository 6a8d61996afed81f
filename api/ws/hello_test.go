package ws

import (
	"sync/atomic"
	"testing"
	"time"

	"albedo/hub/access"
	"albedo/wire"
)

// A hello the daemon has read is answered however long the daemon takes
// over it: the hello timeout is for a client that sends none. Here the
// hello's token takes past the timeout to check (a daemon behind, as in a
// storm of reconnects); before, the timeout closed the connection with
// 1008 while the daemon worked on its hello. The timeout is long enough
// for a loaded machine to read the hello within it (with a timeout of
// 100 ms, the read itself came late beside a busy loop); the check ends
// past it, counted from before the dial, when the timer was not armed
// yet.
func TestReadHelloIsAnsweredWhenTheDaemonIsSlow(t *testing.T) {
	t.Parallel()
	const timeout = 2 * time.Second
	e := newEnv(t, Options{HelloTimeout: timeout})
	check := e.srv.opts.Authenticate
	checked := make(chan struct{})
	var dialed atomic.Int64
	e.srv.opts.Authenticate = func(token string) (access.Principal, bool) {
		defer close(checked)
		time.Sleep(time.Until(time.Unix(0, dialed.Load()).Add(timeout + 200*time.Millisecond))) // the daemon is slow, not the client
		return check(token)
	}
	dialed.Store(time.Now().UnixNano())
	w := e.dialToken(testToken)
	w.Send(wire.Command{ID: 1, Op: wire.OpHello, Token: testToken})
	r := w.Reply(1)
	<-checked
	if !r.OK {
		t.Fatalf("hello %+v", r.Error)
	}
}
