//go:build !e2e_only || e2e_cluster

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/wire"
)

// A bot's reply that ends a turn is acknowledged once the answer is
// committed, wherever the turn runs: on its own node, and on another
// (the bot on node b, the session's turns on node a). So a post the bot
// sends once it has the acknowledgement lands after the answer, every
// time.
func TestBotEndsAreAcknowledgedAfterTheirCommit(t *testing.T) {
	parallel(t)
	cl, _ := startNATSCluster(t, 2)
	ctx := ctxT(t)
	a, b := cl.nodes[0], cl.nodes[1]
	bot, err := a.c.AddBot(ctx, "acker", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.c.Sessions(ctx); err != nil { // discovers b's address
		t.Fatal(err)
	}
	for _, where := range []struct {
		name string
		bot  *node
	}{{"another node", b}, {"the turn's node", a}} {
		session := "ack-" + where.bot.name
		if _, err := a.c.CreateSession(ctx, session, wire.SessionCreate{Provider: "bot:acker"}); err != nil {
			t.Fatal(err)
		}
		w := dialWS(t, client.Snapshot{BaseURL: where.bot.c.Snapshot().BaseURL, Token: bot.Token})
		w.send(wire.Command{ID: 1, Op: wire.OpHello})
		w.next(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == 1 })
		w.send(wire.Command{ID: 2, Op: wire.OpServe})
		w.next(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == 2 })
		const turns = 4
		for i := range turns {
			// Accepted on node a, whose node then holds the lease.
			if _, err := a.c.PutInput(ctx, session, uuid.NewString(), fmt.Sprint("question ", i)); err != nil {
				t.Fatal(err)
			}
			turn := w.next(func(f wire.Frame) bool { return f.Op == wire.PushTurn }).Turn
			id := int64(10 + 2*i)
			w.send(wire.Command{ID: id, Op: wire.OpReply, TurnID: turn.TurnID, Text: fmt.Sprint("answer ", i), Done: true})
			if f := w.next(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == id }); !f.Reply.OK {
				t.Fatalf("%s: reply refused: %+v", where.name, f.Reply.Error)
			}
			w.send(wire.Command{ID: id + 1, Op: wire.OpPost, Session: session, InputID: uuid.NewString(), Text: fmt.Sprint("note ", i)})
			if f := w.next(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == id+1 }); !f.Reply.OK {
				t.Fatalf("%s: post refused: %+v", where.name, f.Reply.Error)
			}
		}
		var order []string
		for _, e := range events(t, ctx, a.c, session) {
			if e.Type == wire.EventMessage {
				order = append(order, e.Text)
			}
		}
		var want []string
		for i := range turns {
			want = append(want, fmt.Sprint("question ", i), fmt.Sprint("answer ", i), fmt.Sprint("note ", i))
		}
		if fmt.Sprint(order) != fmt.Sprint(want) {
			t.Fatalf("bot on %s: messages %q, want %q", where.name, order, want)
		}
	}
}

// A turn handed to a bot on a node that dies goes to the bot's next
// connection within about a second, not once the dead node's
// announcement lapses (6 s; it took 5.7 s after the bot was back).
func TestBotTurnLeavesADeadNodeAtOnce(t *testing.T) {
	parallel(t)
	cl, _ := startNATSCluster(t, 2)
	ctx := ctxT(t)
	a, b := cl.nodes[0], cl.nodes[1]
	bot, err := a.c.AddBot(ctx, "mover", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.c.Sessions(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.c.CreateSession(ctx, "moving", wire.SessionCreate{Provider: "bot:mover"}); err != nil {
		t.Fatal(err)
	}
	serve := func(nd *node) *wsClient {
		w := dialWS(t, client.Snapshot{BaseURL: nd.c.Snapshot().BaseURL, Token: bot.Token})
		w.send(wire.Command{ID: 1, Op: wire.OpHello})
		w.send(wire.Command{ID: 2, Op: wire.OpServe})
		w.next(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == 2 })
		return w
	}
	onB := serve(b)
	if _, err := a.c.PutInput(ctx, "moving", uuid.NewString(), "who answers?"); err != nil {
		t.Fatal(err)
	}
	first := onB.next(func(f wire.Frame) bool { return f.Op == wire.PushTurn }).Turn
	b.d.kill()
	killed := time.Now()
	onA := serve(a)
	again := onA.next(func(f wire.Frame) bool { return f.Op == wire.PushTurn }).Turn
	took := time.Since(killed)
	if again.TurnID != first.TurnID {
		t.Fatalf("the bot's new connection got turn %s, want %s", again.TurnID, first.TurnID)
	}
	if took > 4*time.Second {
		t.Log(a.d.logText())
		t.Fatalf("the turn reached the bot's new connection %v after its node died", took)
	}
	t.Logf("the turn reached the bot's new connection %v after its node died", took)
}
