// Command wsbroadcast is the transport floor albedo is measured against: a
// bare coder/websocket server where every text message a client sends is
// written to every connected client. Nothing is stored. Each client has a
// writer goroutine and a bounded queue; a client that falls 1024 messages
// behind loses the messages that do not fit (the usual choice of such a
// server).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"

	"github.com/coder/websocket"
)

type hub struct {
	mu      sync.Mutex
	clients map[chan []byte]struct{}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	h := &hub{clients: map[chan []byte]struct{}{}}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %d\n", ln.Addr().(*net.TCPAddr).Port)
	log.Fatal(http.Serve(ln, http.HandlerFunc(h.serve)))
}

func (h *hub) serve(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return
	}
	c.SetReadLimit(1 << 20)
	q := make(chan []byte, 1024)
	h.mu.Lock()
	h.clients[q] = struct{}{}
	h.mu.Unlock()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		defer cancel()
		for {
			select {
			case m := <-q:
				if c.Write(ctx, websocket.MessageText, m) != nil {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		_, m, err := c.Read(ctx)
		if err != nil {
			break
		}
		h.mu.Lock()
		for cq := range h.clients {
			select {
			case cq <- m:
			default: // too slow: drop the message for it
			}
		}
		h.mu.Unlock()
	}
	h.mu.Lock()
	delete(h.clients, q)
	h.mu.Unlock()
	c.CloseNow()
}
