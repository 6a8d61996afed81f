package ws

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"

	"albedo/wire"
)

// TestByeDuringUpgrade: a connection upgraded while Bye begins is not in
// Bye's list; it must close itself rather than keep Bye waiting for ever.
func TestByeDuringUpgrade(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	accepted, release := make(chan struct{}), make(chan struct{})
	e.srv.afterAccept = func() { close(accepted); <-release }

	dialed := make(chan error, 1)
	var conn *websocket.Conn
	go func() {
		var err error
		conn, _, err = websocket.Dial(context.Background(), "ws"+e.url[4:]+"/v1/ws", &websocket.DialOptions{
			HTTPHeader: http.Header{"Authorization": {"Bearer " + testToken}}, Subprotocols: []string{wire.Subprotocol}})
		dialed <- err
	}()
	<-accepted // upgraded, not yet registered
	byeDone := make(chan struct{})
	go func() {
		e.srv.Bye(context.Background(), wire.ByeShutdown, 0)
		close(byeDone)
	}()
	// Bye has closed the doors once a new upgrade is refused.
	for {
		resp, err := http.Get(e.url + "/v1/ws")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
	}
	close(release)
	select {
	case <-byeDone:
	case <-time.After(30 * time.Second):
		t.Fatal("Bye is still waiting for a connection it never saw")
	}
	if err := <-dialed; err != nil {
		t.Fatal(err)
	}
	_, _, err := conn.Read(context.Background())
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("the late connection ended with %v, want 1001", err)
	}
}
