package hub

import (
	"context"
	"fmt"
	"testing"

	"albedo/wire"
)

// BenchmarkHelloSubscribe is a reconnect's hello as the crowd sends it:
// a connection subscribes to a session every connection shares (loaded
// already) and two of its own that no one has loaded since the daemon
// started, then closes. Reported per hello.
func BenchmarkHelloSubscribe(b *testing.B) {
	h := newTestHub(b, Options{})
	ctx := context.Background()
	mustCreate(b, h, "common")
	ids := make([]string, 2*b.N)
	for i := range ids {
		ids[i] = fmt.Sprintf("own-%d", i)
		mustCreate(b, h, ids[i])
	}
	h.chans = map[string]*channel{} // loaded by their creation: a restarted daemon has none
	mk := func(r []wire.SubReply) any { return r }
	warm := h.Connect(ConnInfo{Name: "warm", AuthorID: "warm"})
	warm.Subscribe(ctx, []wire.Sub{{Session: "common"}}, mk)
	defer warm.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		c := h.Connect(ConnInfo{Name: "u", AuthorID: fmt.Sprint("u", i)})
		c.Subscribe(ctx, []wire.Sub{{Session: "common"}, {Session: ids[2*i]}, {Session: ids[2*i+1]}}, mk)
		c.Close()
	}
}

// BenchmarkCloseBesideACrowd is a connection of a person who holds
// 18 000 others (a crowd on one token) coming and going: what its
// Connect and Close cost beside them, under the hub's lock.
func BenchmarkCloseBesideACrowd(b *testing.B) {
	h := newTestHub(b, Options{})
	crowd := make([]*Conn, 18000)
	for i := range crowd {
		crowd[i] = h.Connect(ConnInfo{Name: "owner", AuthorID: "owner"})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		// The oldest leaves, a new one comes: a storm's order.
		crowd[i%len(crowd)].Close()
		crowd[i%len(crowd)] = h.Connect(ConnInfo{Name: "owner", AuthorID: "owner"})
	}
	b.StopTimer()
	for _, c := range crowd {
		c.Close()
	}
}

// BenchmarkSessionsChangedBesideACrowd is a session made while 18 000
// connections that do not list sessions (a crowd of viewers) are
// connected beside one that does: what telling the listener costs.
func BenchmarkSessionsChangedBesideACrowd(b *testing.B) {
	h := newTestHub(b, Options{})
	crowd := make([]*Conn, 18000)
	for i := range crowd {
		crowd[i] = h.Connect(ConnInfo{Name: "viewer", AuthorID: fmt.Sprint("viewer-", i)})
	}
	owner := h.Connect(ConnInfo{Name: "owner", AuthorID: "owner"})
	owner.ListenSessions()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		h.sessionsChanged()
	}
	b.StopTimer()
	owner.Close()
	for _, c := range crowd {
		c.Close()
	}
}
