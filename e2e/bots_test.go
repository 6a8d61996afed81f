//go:build !e2e_only || e2e_core

package e2e

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/wire"
)

// A session with provider bot:example is answered by the example bot
// process; two viewers see the streamed reply; the bot killed mid-turn and
// started again completes the turn.
func TestExampleBotAnswersAndSurvivesItsDeath(t *testing.T) {
	parallel(t)
	// The CLI's daemon, as a user has: the bot, the session and the shares
	// below are all made with the CLI.
	fx := newFixture(t, fixtureOpts{cli: true})
	home, c, ctx := fx.home, fx.c, fx.ctx
	token := strings.TrimSpace(lastLine(cli(t, home, "bots", "add", "example")))
	id := strings.TrimSpace(lastLine(cli(t, home, "sessions", "new", "--title", "stats", "--provider", "bot:example")))

	// Two viewers with read-only tokens.
	type viewer struct {
		sub   *client.Subscription
		mu    sync.Mutex
		text  string
		reply *wire.Event
	}
	var viewers []*viewer
	for range 2 {
		vt := strings.TrimSpace(lastLine(cli(t, home, "share", "--token", id)))
		vc, err := client.New(client.Options{Home: home, Token: vt})
		if err != nil {
			t.Fatal(err)
		}
		st := vc.Stream(client.StreamOptions{})
		defer st.Close()
		viewers = append(viewers, &viewer{sub: st.Subscribe(id, client.Cursor{})})
	}

	bot := startBot(t, home, token, 300*time.Millisecond)
	r, err := c.PutInput(ctx, id, uuid.Must(uuid.NewV7()).String(), "count my words please")
	if err != nil {
		t.Fatal(err)
	}
	// Kill the bot once the first piece of its answer has streamed.
	first := viewers[0]
	for {
		it, err := first.sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if it.Op == wire.PushDelta && it.Text.TurnID == r.TurnID {
			break
		}
	}
	bot.kill()
	st, err := waitPhase(ctx, c, id, wire.PhaseWaiting)
	if err != nil {
		t.Fatalf("after the bot died: %+v %v", st, err)
	}
	startBot(t, home, token, 300*time.Millisecond)

	var wg sync.WaitGroup
	for _, v := range viewers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				it, err := v.sub.Next(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				v.mu.Lock()
				switch {
				case it.Op == wire.PushPartial && it.Text.TurnID == r.TurnID:
					v.text = it.Text.Text
				case it.Op == wire.PushDelta && it.Text.TurnID == r.TurnID:
					v.text += it.Text.Text
				case it.Op == wire.PushEvent && it.Event.TurnID == r.TurnID && it.Event.Type == wire.EventMessage:
					v.reply = it.Event
				}
				end := it.Op == wire.PushEvent && it.Event.Type == wire.EventTurn && it.Event.TurnID == r.TurnID && it.Event.State != wire.TurnStarted
				v.mu.Unlock()
				if end {
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, v := range viewers {
		if v.reply == nil || v.reply.Author != "example" || v.reply.State != wire.MessageComplete ||
			!strings.Contains(v.reply.Text, "Your message has 4 words") {
			t.Fatalf("viewer %d: reply %+v", i, v.reply)
		}
		if v.reply.Text != viewers[0].reply.Text {
			t.Fatalf("viewers disagree: %q vs %q", v.reply.Text, viewers[0].reply.Text)
		}
	}
	// A viewer token cannot send.
	vt := strings.TrimSpace(lastLine(cli(t, home, "share", "--token", id)))
	vc, _ := client.New(client.Options{Home: home, Token: vt})
	if _, err := vc.PutInput(ctx, id, uuid.Must(uuid.NewV7()).String(), "x"); client.Code(err) != wire.CodeForbidden {
		t.Fatalf("viewer send: %v", err)
	}
}

// waitPhase watches a session's status pushes until phase.
func waitPhase(ctx context.Context, c *client.Client, session string, phase wire.Phase) (wire.Frame, error) {
	st := c.Stream(client.StreamOptions{})
	defer st.Close()
	sub := st.Subscribe(session, client.Cursor{})
	for {
		it, err := sub.Next(ctx)
		if err != nil {
			return wire.Frame{}, err
		}
		if it.Op == wire.PushStatus && it.Status.Phase == phase {
			return it.Frame, nil
		}
	}
}

// Presence follows joins, leaves, a viewer's dropped connection and a
// daemon restart.
func TestPresenceThroughJoinsLeavesAndRestart(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "p"})
	owner := fx.c.Stream(client.StreamOptions{Backoff: client.BackoffOptions{Cap: 300 * time.Millisecond}})
	defer owner.Close()
	sub := owner.Subscribe("p", client.Cursor{Epoch: fx.s.Epoch})
	waitPresence := func(what string, ok func(*wire.PresencePush) bool) {
		t.Helper()
		for {
			it, err := sub.Next(fx.ctx)
			if err != nil {
				t.Fatalf("waiting for %s: %v", what, err)
			}
			if it.Op == wire.PushPresence && ok(it.Presence) {
				return
			}
		}
	}
	roles := func(p *wire.PresencePush) string {
		var rs []string
		for _, v := range p.People {
			rs = append(rs, string(v.Role))
		}
		sort.Strings(rs)
		return strings.Join(rs, ",")
	}
	waitPresence("the owner alone", func(vs *wire.PresencePush) bool { return roles(vs) == "owner" })

	share, err := fx.c.Share(fx.ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := client.New(client.Options{Home: fx.home, Token: share.Token, Name: "watcher/1"})
	vst := vc.Stream(client.StreamOptions{Backoff: client.BackoffOptions{Cap: 300 * time.Millisecond}})
	vsub := vst.Subscribe("p", client.Cursor{})
	// A person is named by their token, never by the client's name.
	waitPresence("the viewer's arrival", func(vs *wire.PresencePush) bool {
		return roles(vs) == "owner,viewer" && vs.People[1].Name == "viewer" && vs.Viewers == 2
	})
	vsub.Close()
	waitPresence("the viewer's departure", func(vs *wire.PresencePush) bool { return roles(vs) == "owner" })

	// A viewer whose connection just drops.
	w := dialWS(t, client.Snapshot{BaseURL: fx.c.Snapshot().BaseURL, Token: share.Token})
	w.send(wire.Command{ID: 1, Op: wire.OpHello, Subs: []wire.Sub{{Session: "p"}}})
	waitPresence("the raw viewer", func(vs *wire.PresencePush) bool { return roles(vs) == "owner,viewer" })
	w.c.CloseNow()
	waitPresence("the dropped viewer gone", func(vs *wire.PresencePush) bool { return roles(vs) == "owner" })

	// Through a restart: both reattach and presence lists both again.
	vsub = vst.Subscribe("p", client.Cursor{})
	defer vst.Close()
	waitPresence("the viewer back", func(vs *wire.PresencePush) bool { return roles(vs) == "owner,viewer" })
	fx.d.stop()
	startDaemon(t, fx.home)
	// Both on connections of the new daemon, and live there: the viewer
	// leaving is seen.
	waitPresence("both after the restart", func(vs *wire.PresencePush) bool {
		return roles(vs) == "owner,viewer" && vs.Viewers == 2
	})
	vsub.Close()
	waitPresence("the viewer gone after the restart", func(vs *wire.PresencePush) bool { return roles(vs) == "owner" && vs.Viewers == 1 })
	_ = vsub
}

// A bot's Post through the client stream: a bot message, no turn, and the
// same receipt when posted again with the same input_id.
func TestBotPostThroughTheClient(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "p"})
	tok, err := fx.c.AddBot(fx.ctx, "poster", nil)
	if err != nil {
		t.Fatal(err)
	}
	bc, _ := client.New(client.Options{Home: fx.home, Token: tok.Token})
	st := bc.Stream(client.StreamOptions{})
	defer st.Close()
	sub := st.Subscribe("p", client.Cursor{Epoch: fx.s.Epoch})
	id := uuid.Must(uuid.NewV7()).String()
	r1, err := st.Post(fx.ctx, "p", id, "from the bot")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := st.Post(fx.ctx, "p", id, "from the bot")
	if err != nil || r2.Order != r1.Order || r1.Delivery != wire.DeliveryDone || r1.TurnID != "" {
		t.Fatalf("receipts %+v %+v %v", r1, r2, err)
	}
	for {
		it, err := sub.Next(fx.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if it.Op == wire.PushEvent {
			if e := it.Event; e.Role != wire.RoleBot || e.Author != "poster" || e.Text != "from the bot" || e.Offset != 1 {
				t.Fatalf("event %+v", e)
			}
			break
		}
	}
	if sub.Session() != "p" || sub.Cursor().Offset != 1 {
		t.Fatalf("subscription %s at %+v", sub.Session(), sub.Cursor())
	}
	st2, err := fx.c.Status(fx.ctx, "p")
	if err != nil || st2.Head != 1 || st2.LastTurn != nil {
		t.Fatalf("a post started something: %+v %v", st2, err)
	}
}
