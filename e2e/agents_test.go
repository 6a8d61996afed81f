//go:build !e2e_only || e2e_core

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"albedo/wire"
)

// A coding agent's session across a SIGKILL of the daemon: an edit the
// agent asks to make is approved from the CLI and lands; a second one
// waits for a decision when the daemon is killed. After the restart that
// turn is reported lost (its call failed, nothing written), and at the
// next turn the agent, started again, loads its own session and is told.
func TestACodingAgentsTurnLostToAKillIsSaidAndTold(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{agent: true, session: "k", create: wire.SessionCreate{Title: "k"}})
	home, ws, d, c, ctx := fx.home, fx.ws, fx.d, fx.c, fx.ctx
	pendingCall := func(tool string) string {
		t.Helper()
		if _, err := waitPhase(ctx, c, "k", wire.PhaseApproval); err != nil {
			t.Fatalf("no approval: %v\n%s", err, d.logText())
		}
		list := cliJSON(t, home, "approvals")
		if len(list) != 1 || list[0]["tool"] != tool {
			t.Fatalf("approvals %v", list)
		}
		return list[0]["call_id"].(string)
	}
	if _, err := c.PutInput(ctx, "k", uuid.NewString(), "edit a.txt first words"); err != nil {
		t.Fatal(err)
	}
	call := pendingCall("acp:edit")
	if out := cli(t, home, "approve", "k", call); !strings.Contains(out, call+": allow") {
		t.Fatalf("albedo approve: %s", out)
	}
	evs := waitTurnsClosed(t, ctx, c, "k", 1)
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "first words\n" || evs[len(evs)-2].Text != "edited a.txt" {
		t.Fatalf("a.txt %q, events %v", b, evs)
	}

	if _, err := c.PutInput(ctx, "k", uuid.NewString(), "edit b.txt never"); err != nil {
		t.Fatal(err)
	}
	pendingCall("acp:edit")
	d.kill()
	startDaemon(t, home)
	evs = waitTurnsClosed(t, ctx, c, "k", 2)
	var lost, end wire.Event
	for _, ev := range evs {
		switch {
		case ev.Type == wire.EventToolResult:
			lost = ev
		case ev.Type == wire.EventTurn && ev.State != wire.TurnStarted:
			end = ev
		}
	}
	if lost.State != wire.ToolFailed || !strings.Contains(lost.Error, "lost") || end.State != wire.TurnFailed || !strings.Contains(end.Error, "lost") {
		t.Fatalf("lost call %+v, end %+v", lost, end)
	}
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); err == nil {
		t.Fatal("b.txt was written")
	}
	if list := cliJSON(t, home, "approvals"); len(list) != 0 {
		t.Fatalf("approvals after the restart: %v", list)
	}

	if _, err := c.PutInput(ctx, "k", uuid.NewString(), "recall"); err != nil {
		t.Fatal(err)
	}
	evs = waitTurnsClosed(t, ctx, c, "k", 3)
	reply := evs[len(evs)-2]
	if !strings.Contains(reply.Text, "prompts=3 transcript=false") || !strings.Contains(reply.Text, "your previous turn was cut short") {
		t.Fatalf("the agent's recall: %q", reply.Text)
	}
}

// albedo stop while a coding agent's request waits for a decision: the
// request is answered cancelled, its call ends so, the turn is
// interrupted by the stop, nothing is written; after the start the agent
// loads its session and goes on.
func TestAStopCancelsACodingAgentsWaitingRequest(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{agent: true, session: "k", create: wire.SessionCreate{Title: "k"}})
	home, ws, d, c, ctx := fx.home, fx.ws, fx.d, fx.c, fx.ctx
	if _, err := c.PutInput(ctx, "k", uuid.NewString(), "edit b.txt never"); err != nil {
		t.Fatal(err)
	}
	if _, err := waitPhase(ctx, c, "k", wire.PhaseApproval); err != nil {
		t.Fatalf("no approval: %v\n%s", err, d.logText())
	}
	d.stop()
	startDaemon(t, home)
	evs := waitTurnsClosed(t, ctx, c, "k", 1)
	var res, end wire.Event
	for _, ev := range evs {
		switch {
		case ev.Type == wire.EventToolResult:
			res = ev
		case ev.Type == wire.EventTurn && ev.State != wire.TurnStarted:
			end = ev
		}
	}
	if res.State != wire.ToolCancelled || !strings.Contains(res.Error, "daemon stopped") || end.State != wire.TurnInterrupted || end.Reason != wire.ReasonDaemonShutdown {
		t.Fatalf("result %+v, end %+v", res, end)
	}
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); err == nil {
		t.Fatal("b.txt was written")
	}
	if _, err := c.PutInput(ctx, "k", uuid.NewString(), "recall"); err != nil {
		t.Fatal(err)
	}
	evs = waitTurnsClosed(t, ctx, c, "k", 2)
	if reply := evs[len(evs)-2]; !strings.Contains(reply.Text, "prompts=2 transcript=false") {
		t.Fatalf("the agent's recall: %q", reply.Text)
	}
}
