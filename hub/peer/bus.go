package peer

import (
	"context"
	"errors"
)

// A Bus joins a node to the other nodes of its cluster. Core NATS
// (albedo/hub/natsbus) is the one a daemon uses; Memory joins hubs in one
// process; Nop is a node alone.
//
// Delivery is at most once: nothing may depend on a notice arriving,
// only on how soon a node learns, because every fact a notice carries is
// also in the store.
type Bus interface {
	// Start delivers to h, from now on, what the other nodes publish and
	// ask. Call it once, before Publish or Ask.
	Start(h Handler) error
	// Publish tells every other node n, or drops it when it cannot go
	// (the bus is down). The notice is encoded before Publish returns,
	// so the caller may reuse what it points to.
	Publish(n Notice)
	// Ask sends r to the node r.To and waits for its answer until ctx is
	// done. An answer that carries an Error is returned as it is, with a
	// nil error: the caller decides.
	Ask(ctx context.Context, r Request) (Response, error)
}

// A Handler takes what a bus delivers. A bus never calls it with a lock
// of its own held, so a handler may publish and ask from inside.
type Handler interface {
	// Notice takes another node's notice. The notices of one kind from
	// one node arrive in the order that node published them, one at a
	// time; a notice of a Commit arrives as Events.
	Notice(from string, n Notice)
	// Request takes a request addressed to this node. It calls answer
	// once, from any goroutine, soon: the asker waits.
	Request(r Request, answer func(Response))
	// Resumed says that the bus was down and is back: whatever was
	// published meanwhile is lost, so the node looks at the store.
	Resumed()
}

// ErrAlone is Ask's error on a bus with no other node.
var ErrAlone = errors.New("no other node to ask: this node has no cluster bus")

// Nop is the bus of a node alone: it publishes nothing and has no one to
// ask.
type Nop struct{}

func (Nop) Start(Handler) error { return nil }
func (Nop) Publish(Notice)      {}
func (Nop) Ask(context.Context, Request) (Response, error) {
	return Response{}, ErrAlone
}
