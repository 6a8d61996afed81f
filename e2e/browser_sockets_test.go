package e2e

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"albedo/wire"
)

// sockets is what a tab's websockets did, as Chromium's Network domain
// tells it: how many the tab opened, and every frame each way, in the
// order they went. The tab's listener writes it; tests read it with its
// methods, from any goroutine.
type sockets struct {
	mu     sync.Mutex
	opened int
	frames []wsFrame
}

// wsFrame is one websocket message; data may hold several frames of the
// protocol, one a line.
type wsFrame struct {
	sent bool
	data string
}

// recordSockets starts recording the tab's websockets: call it before
// the tab loads the page (browser.tab, then page.navigate).
func (p *page) recordSockets() *sockets {
	p.t.Helper()
	s := &sockets{}
	err := chromedp.Listen(p.ctx, func(ev any) {
		s.mu.Lock()
		defer s.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventWebSocketCreated:
			s.opened++
		case *network.EventWebSocketFrameSent:
			s.frames = append(s.frames, wsFrame{sent: true, data: string(e.Response.PayloadData)})
		case *network.EventWebSocketFrameReceived:
			s.frames = append(s.frames, wsFrame{data: string(e.Response.PayloadData)})
		}
	})
	if err != nil {
		p.t.Fatalf("listen to the page's websockets: %v", err)
	}
	return s
}

// count is how many websockets the tab has opened.
func (s *sockets) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opened
}

// sentOps returns the commands the tab sent whose op is op, in order.
func (s *sockets) sentOps(op wire.Op) []wire.Command {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []wire.Command
	for _, f := range s.frames {
		if !f.sent {
			continue
		}
		for _, line := range strings.Split(f.data, "\n") {
			var c wire.Command
			if json.Unmarshal([]byte(line), &c) == nil && c.Op == op {
				out = append(out, c)
			}
		}
	}
	return out
}

// received returns the frames the tab received after the n-th command
// it sent with op (counting from 1), in order: replies and pushes.
func (s *sockets) received(op wire.Op, n int) []wire.Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []wire.Frame
	seen := 0
	for _, f := range s.frames {
		for _, line := range strings.Split(f.data, "\n") {
			if line == "" {
				continue
			}
			if f.sent {
				var c wire.Command
				if json.Unmarshal([]byte(line), &c) == nil && c.Op == op {
					seen++
				}
				continue
			}
			if seen < n {
				continue
			}
			var fr wire.Frame
			if json.Unmarshal([]byte(line), &fr) == nil {
				out = append(out, fr)
			}
		}
	}
	return out
}
