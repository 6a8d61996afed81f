package peer

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
)

// Memory joins buses in one process as NATS joins nodes, for tests and
// for hubs that share a process. Each notice and request is encoded and
// read back as it would be on the wire, so that what does not survive
// JSON fails here too. Like core NATS it delivers at most once: a node
// whose queue of one kind is full (memoryQueue) loses what comes next.
type Memory struct {
	mu    sync.Mutex
	nodes map[string]*MemoryBus
}

// memoryQueue is how many notices of one kind wait for a node's handler
// before more are dropped.
const memoryQueue = 1024

// NewMemory returns an empty network.
func NewMemory() *Memory { return &Memory{nodes: map[string]*MemoryBus{}} }

// Join returns node's bus on m; a node already there is replaced.
func (m *Memory) Join(node string) *MemoryBus {
	return &MemoryBus{m: m, node: node, done: make(chan struct{})}
}

// MemoryBus is one node's Bus on a Memory network.
type MemoryBus struct {
	m    *Memory
	node string

	h      Handler
	queues map[string]chan delivery // by Kind, and RequestSubject
	done   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
}

type delivery struct {
	from   string
	data   []byte
	answer chan Response // a request's
}

// Start joins the network and delivers to h.
func (b *MemoryBus) Start(h Handler) error {
	b.h = h
	b.queues = map[string]chan delivery{RequestSubject: make(chan delivery, memoryQueue)}
	for _, k := range Kinds {
		b.queues[string(k)] = make(chan delivery, memoryQueue)
	}
	for name, q := range b.queues {
		b.wg.Add(1)
		go b.deliver(name, q)
	}
	b.m.mu.Lock()
	b.m.nodes[b.node] = b
	b.m.mu.Unlock()
	return nil
}

// Close leaves the network, as a node that died: nothing more reaches
// it, and asking it fails at once.
func (b *MemoryBus) Close() {
	b.once.Do(func() {
		b.m.mu.Lock()
		if b.m.nodes[b.node] == b {
			delete(b.m.nodes, b.node)
		}
		b.m.mu.Unlock()
		close(b.done)
		b.wg.Wait()
	})
}

// deliver hands one queue's deliveries to the handler, in order.
func (b *MemoryBus) deliver(name string, q chan delivery) {
	defer b.wg.Done()
	for {
		select {
		case <-b.done:
			return
		case d := <-q:
			if name == RequestSubject {
				b.request(d)
				continue
			}
			if n, err := Decode(Kind(name), d.data); err == nil {
				b.h.Notice(d.from, n)
			}
		}
	}
}

func (b *MemoryBus) request(d delivery) {
	var r Request
	if json.Unmarshal(d.data, &r) != nil {
		return
	}
	b.h.Request(r, func(resp Response) {
		data, err := json.Marshal(resp)
		if err != nil {
			return
		}
		var back Response
		if json.Unmarshal(data, &back) != nil {
			return
		}
		select {
		case d.answer <- back:
		default: // answered already
		}
	})
}

// others are the started nodes besides b.
func (b *MemoryBus) others() []*MemoryBus {
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	out := make([]*MemoryBus, 0, len(b.m.nodes))
	for name, o := range b.m.nodes {
		if name != b.node {
			out = append(out, o)
		}
	}
	return out
}

// Publish hands n to every other node's queue of its kind.
func (b *MemoryBus) Publish(n Notice) {
	data, err := Encode(n)
	if err != nil {
		return
	}
	for _, o := range b.others() {
		select {
		case o.queues[string(n.Kind())] <- delivery{from: b.node, data: data}:
		default: // that node is behind: dropped, as NATS drops for a slow consumer
		}
	}
}

// Ask hands r to node r.To and waits for its answer.
func (b *MemoryBus) Ask(ctx context.Context, r Request) (Response, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return Response{}, err
	}
	b.m.mu.Lock()
	to := b.m.nodes[r.To]
	b.m.mu.Unlock()
	if to == nil || r.To == b.node {
		return Response{}, fmt.Errorf("ask node %s to %s: no such node on the bus", r.To, r.Op)
	}
	answer := make(chan Response, 1)
	select {
	case to.queues[RequestSubject] <- delivery{from: b.node, data: data, answer: answer}:
	default:
		return Response{}, fmt.Errorf("ask node %s to %s: it is behind", r.To, r.Op)
	}
	select {
	case resp := <-answer:
		return resp, nil
	case <-to.done:
		return Response{}, fmt.Errorf("ask node %s to %s: it left", r.To, r.Op)
	case <-ctx.Done():
		return Response{}, fmt.Errorf("ask node %s to %s: %w", r.To, r.Op, ctx.Err())
	}
}
