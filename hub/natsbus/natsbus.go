package natsbus

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"

	"albedo/hub/peer"
)

// Bus is a node's peer.Bus over core NATS.
type Bus struct {
	nc    *nats.Conn
	node  string
	space string
}

// New returns node's bus on nc. space is the cluster's id (db.ClusterID),
// or empty: every subject starts with "albedo." and it, so that clusters
// that share a NATS hear only their own nodes.
func New(nc *nats.Conn, node, space string) *Bus {
	s := "albedo"
	if space != "" {
		s += "." + space
	}
	return &Bus{nc: nc, node: node, space: s}
}

// nodeHeader names the node that published a notice, so that the node
// itself skips it unread (every node hears its own notices).
const nodeHeader = "Albedo-Node"

// Subject is the NATS subject of a kind of notice (or of requests,
// peer.RequestSubject) in this bus's cluster.
func (b *Bus) Subject(kind string) string { return b.space + "." + kind }

// Start subscribes to every kind of notice and to requests, and has a
// reconnection tell h that what was published meanwhile is lost. NATS
// delivers each subscription's messages in order on a goroutine of its
// own, with no lock of the bus held.
func (b *Bus) Start(h peer.Handler) error {
	for _, k := range peer.Kinds {
		if _, err := b.nc.Subscribe(b.Subject(string(k)), b.notices(h, k)); err != nil {
			return fmt.Errorf("subscribe to %s: %w", k, err)
		}
	}
	if _, err := b.nc.Subscribe(b.Subject(peer.RequestSubject), b.requests(h)); err != nil {
		return fmt.Errorf("subscribe to requests: %w", err)
	}
	b.nc.SetReconnectHandler(func(*nats.Conn) { h.Resumed() })
	if !b.nc.IsConnected() {
		return nil // NATS is not up yet: the subscriptions are made when it is
	}
	return b.nc.Flush()
}

// notices reads one kind's messages for h, skipping the node's own and
// dropping what it cannot read.
func (b *Bus) notices(h peer.Handler, k peer.Kind) nats.MsgHandler {
	return func(m *nats.Msg) {
		from := m.Header.Get(nodeHeader)
		if from == b.node {
			return
		}
		if n, err := peer.Decode(k, m.Data); err == nil {
			h.Notice(from, n)
		}
	}
}

// requests reads the requests addressed to this node for h.
func (b *Bus) requests(h peer.Handler) nats.MsgHandler {
	return func(m *nats.Msg) {
		var r peer.Request
		if json.Unmarshal(m.Data, &r) != nil || r.To != b.node {
			return
		}
		h.Request(r, func(resp peer.Response) {
			data, err := json.Marshal(resp)
			if err == nil {
				_ = m.Respond(data)
			}
		})
	}
}

// Publish sends n on its kind's subject, its node named in a header. A
// notice that cannot go (NATS down) is dropped: the store has what it
// says.
func (b *Bus) Publish(n peer.Notice) {
	data, err := peer.Encode(n)
	if err != nil {
		return
	}
	m := nats.NewMsg(b.Subject(string(n.Kind())))
	m.Header.Set(nodeHeader, b.node)
	m.Data = data
	_ = b.nc.PublishMsg(m)
}

// Ask sends r on the requests' subject, which every node hears and only
// r.To answers, and waits for the answer.
func (b *Bus) Ask(ctx context.Context, r peer.Request) (peer.Response, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return peer.Response{}, err
	}
	msg, err := b.nc.RequestWithContext(ctx, b.Subject(peer.RequestSubject), data)
	if err != nil {
		return peer.Response{}, fmt.Errorf("ask node %s to %s: %w", r.To, r.Op, err)
	}
	var resp peer.Response
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return peer.Response{}, fmt.Errorf("node %s's answer to %s: %w", r.To, r.Op, err)
	}
	return resp, nil
}
