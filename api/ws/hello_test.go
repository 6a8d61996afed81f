package ws

import (
	"testing"
	"time"

	"albedo/hub"
	"albedo/wire"
)

// A hello the daemon has read is answered however long the daemon takes
// over it: the hello timeout is for a client that sends none. Here the
// hello's token takes five times the timeout to check (a daemon behind,
// as in a storm of reconnects); before, the timeout closed the
// connection with 1008 while the daemon worked on its hello.
func TestReadHelloIsAnsweredWhenTheDaemonIsSlow(t *testing.T) {
	t.Parallel()
	const timeout = 100 * time.Millisecond
	e := newEnv(t, Options{HelloTimeout: timeout})
	check := e.srv.opts.Authenticate
	checked := make(chan struct{})
	e.srv.opts.Authenticate = func(token string) (hub.Principal, bool) {
		defer close(checked)
		time.Sleep(5 * timeout) // the daemon is slow, not the client
		return check(token)
	}
	w := e.dialToken(testToken)
	w.Send(wire.Command{ID: 1, Op: wire.OpHello, Token: testToken})
	r := w.Reply(1)
	<-checked
	if !r.OK {
		t.Fatalf("hello %+v", r.Error)
	}
}
