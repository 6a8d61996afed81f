//go:build !e2e_only || e2e_core

package e2e

import (
	"strings"
	"testing"

	"albedo/wire"
)

// Presence costs what the contract bounds, whatever clients write: a
// hello whose client label is past wire.MaxClientBytes is refused, and 30
// sockets with the longest label allowed, joining and leaving one session
// while each is told who watches, leave the daemon's RSS within 64 MiB
// of where it was.
func TestPresenceMemoryIsBounded(t *testing.T) {
	parallel(t)
	// Growth is what it measures: without the collector's floor, heap the
	// daemon fills whatever it is sent.
	fx := newFixture(t, fixtureOpts{session: "s", args: []string{"--gc-floor-bytes", "0"}})
	snap := fx.c.Snapshot()
	huge := dialWS(t, snap)
	huge.send(wire.Command{ID: 1, Op: wire.OpHello, Client: strings.Repeat("x", 1<<20-100), Subs: []wire.Sub{{Session: "s"}}})
	if r := huge.next(func(f wire.Frame) bool { return f.IsReply() }); r.Reply.OK || r.Reply.Error.Code != wire.CodeBadRequest {
		t.Fatalf("a 1 MiB client label: %+v", r.Reply)
	}
	before := rssMiB(t, fx.d.cmd.Process.Pid)
	label := strings.Repeat("d", wire.MaxClientBytes)
	const n = 30
	for round := range 3 {
		ws := make([]*wsClient, n)
		for i := range ws {
			ws[i] = dialWS(t, snap)
			ws[i].send(wire.Command{ID: 1, Op: wire.OpHello, Client: label, Subs: []wire.Sub{{Session: "s"}}})
		}
		for _, w := range ws {
			f := w.next(func(f wire.Frame) bool { return f.Op == wire.PushPresence && f.Presence.Viewers == n })
			if len(f.Presence.People) != 1 || f.Presence.People[0].Devices != n {
				t.Fatalf("round %d: presence %+v", round, f.Presence)
			}
		}
		for _, w := range ws {
			w.c.CloseNow()
		}
	}
	if grew := rssMiB(t, fx.d.cmd.Process.Pid) - before; grew > 64 {
		t.Fatalf("the daemon grew by %.0f MiB", grew)
	}
}
