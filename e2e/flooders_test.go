package e2e

import (
	"context"
	"net"
	"time"
)

// slowHeaders opens a connection to addr and sends a request's header a
// byte every 2 s; when the daemon closes it, it opens another, until ctx
// ends.
func slowHeaders(ctx context.Context, addr string) {
	const header = "GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " // never ends
	var dialer net.Dialer
	for ctx.Err() == nil {
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err != nil {
			if ctx.Err() == nil {
				time.Sleep(10 * time.Millisecond) // the listen queue is full: try again soon
			}
			continue
		}
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			var b [1]byte
			conn.Read(b[:]) // returns when the daemon closes it
		}()
		tick := time.NewTicker(2 * time.Second)
		for i := 0; ; i = (i + 1) % len(header) {
			if _, err := conn.Write([]byte{header[i]}); err != nil {
				break
			}
			select {
			case <-tick.C:
				continue
			case <-closed:
			case <-ctx.Done():
			}
			break
		}
		tick.Stop()
		conn.Close()
		<-closed
	}
}
