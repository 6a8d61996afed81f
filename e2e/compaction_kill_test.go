//go:build !e2e_only || e2e_core

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// A daemon killed while a turn's compaction asks for its summary loses
// nothing: after the restart, the turn is interrupted (daemon_restart),
// no compaction was committed, every message is there at dense offsets,
// and the next turn compacts and completes.
func TestKillDuringACompaction(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	f := withFakeAnd(t, home, "context_tokens = 400\n")
	d := startDaemon(t, home)
	c := newClient(t, home)
	ctx := ctxT(t)
	if _, err := c.CreateSession(ctx, "k", wire.SessionCreate{Title: "k", Provider: "fake"}); err != nil {
		t.Fatal(err)
	}
	say := func(i int) {
		t.Helper()
		if _, err := c.PutInput(ctx, "k", uuid.NewString(), strings.Repeat(fmt.Sprintf("word%02d ", i), 20)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		say(i)
		waitTurnsClosed(t, ctx, c, "k", i+1)
	}
	hold := make(chan struct{})
	defer close(hold)
	f.Push(fakeopenai.Reply{Chunks: []string{"a summary, never finished"}, Block: hold})
	say(4)
	for r := range f.Arrived() {
		var first struct{ Role, Content string }
		json.Unmarshal(r.Messages[0], &first)
		if first.Role == "system" && strings.Contains(first.Content, "You compact a conversation") {
			break
		}
	}
	d.kill()
	startDaemon(t, home)
	evs := waitTurnsClosed(t, ctx, c, "k", 5)
	for i, ev := range evs {
		if ev.Offset != int64(i+1) || ev.Type == wire.EventCompaction {
			t.Fatalf("after the kill: event %d is %+v", i+1, ev)
		}
	}
	if last := evs[len(evs)-1]; last.State != wire.TurnInterrupted || last.Reason != wire.ReasonDaemonRestart {
		t.Fatalf("the killed turn: %+v", last)
	}
	users := 0
	for _, ev := range evs {
		if ev.Role == wire.RoleUser {
			users++
		}
	}
	if users != 5 {
		t.Fatalf("%d of 5 messages after the kill", users)
	}
	say(5)
	evs = waitTurnsClosed(t, ctx, c, "k", 6)
	compacted := false
	for _, ev := range evs {
		compacted = compacted || ev.Type == wire.EventCompaction
	}
	if last := evs[len(evs)-1]; !compacted || last.State != wire.TurnCompleted {
		t.Fatalf("the next turn: compacted %v, %+v", compacted, last)
	}
}
