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
