package hub

import (
	"fmt"
	"testing"
)

// What a node's work costs beside a crowd of connections it does not
// concern: each figure should not grow with the crowd.

// BenchmarkCloseBesideACrowd is a connection of a person who holds
// 18 000 others (a crowd on one token) coming and going: what its
// Connect and Close cost beside them, under the hub's lock.
func BenchmarkCloseBesideACrowd(b *testing.B) {
	h := newTestHub(b, Options{})
	crowd := connectCrowd(b, h, func(int) string { return "owner" })
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		// The oldest leaves, a new one comes: a storm's order.
		crowd[i%len(crowd)].Close()
		crowd[i%len(crowd)] = h.Connect(ConnInfo{Name: "owner", AuthorID: "owner"})
	}
}

// BenchmarkSessionsChangedBesideACrowd is a session made while 18 000
// connections that do not list sessions (a crowd of viewers) are
// connected beside one that does: what telling the listener costs.
func BenchmarkSessionsChangedBesideACrowd(b *testing.B) {
	h := newTestHub(b, Options{})
	connectCrowd(b, h, func(i int) string { return fmt.Sprint("viewer-", i) })
	owner := h.Connect(ConnInfo{Name: "owner", AuthorID: "owner"})
	defer owner.Close()
	owner.ListenSessions()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		h.sessionsChanged()
	}
}

// connectCrowd connects a crowd of 18 000 to h, the i-th as author(i),
// closed when the benchmark ends.
func connectCrowd(b *testing.B, h *Hub, author func(i int) string) []*Conn {
	crowd := make([]*Conn, 18000)
	for i := range crowd {
		crowd[i] = h.Connect(ConnInfo{Name: "crowd", AuthorID: author(i)})
	}
	b.Cleanup(func() {
		for _, c := range crowd {
			c.Close()
		}
	})
	return crowd
}
