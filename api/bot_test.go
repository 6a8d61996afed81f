package api

import (
	"strings"
	"testing"

	"albedo/hub"
	"albedo/wire"
)

func TestUnknownBotProviderRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	var eb wire.ErrorBody
	code, _ := e.do("POST", "/v1/sessions", nil, `{"provider":"bot:ghost"}`, &eb)
	if code != 400 || !strings.Contains(eb.Error.Message, `unknown bot "ghost"`) {
		t.Fatalf("%d %+v", code, eb.Error)
	}
}

// A turn of a bot:NAME session waits until a connection of that bot
// serves, streams the bot's reply to every viewer, starts over on another
// serving connection when the first drops, and commits what the bot
// finished, authored by the bot.
func TestBotServedTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	botTok := e.botToken("helper")
	s := e.createWith("s", `{"provider":"bot:helper"}`)
	owner := e.dial(true).HelloFromStart(s)
	viewer := e.dialToken(e.viewerToken("s")).HelloFromStart(s)

	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"what's up?"}`, &r)
	owner.Next(func(f wire.Frame) bool {
		return f.Op == wire.PushStatus && f.Status.Phase == wire.PhaseWaiting && f.Status.TurnID == r.TurnID
	})

	// The first bot connection takes the turn, says something, and drops.
	b1 := e.dialToken(botTok)
	b1.Hello()
	b1.Send(wire.Command{ID: 2, Op: wire.OpServe})
	turn := b1.Next(func(f wire.Frame) bool { return f.Op == wire.PushTurn })
	if turn.Turn.TurnID != r.TurnID || turn.Session != "s" || turn.Turn.InputID != r.InputID ||
		len(turn.Turn.Messages) != 1 || turn.Turn.Messages[0].Text != "what's up?" || turn.Turn.Messages[0].Role != wire.RoleUser {
		t.Fatalf("turn push %+v", turn)
	}
	b1.Send(wire.Command{ID: 3, Op: wire.OpReply, TurnID: r.TurnID, Text: "half a th"})
	if rep := b1.Reply(3); !rep.OK {
		t.Fatalf("reply: %+v", rep.Error)
	}
	viewer.Next(func(f wire.Frame) bool { return f.Op == wire.PushDelta && f.Text.Text == "half a th" })
	// Running until b1 drops, so the owner is sure to be told: the waiting
	// status awaited next is then the one that follows the drop.
	owner.Next(func(f wire.Frame) bool {
		return f.Op == wire.PushStatus && f.Status.Phase == wire.PhaseRunning && f.Status.TurnID == r.TurnID
	})
	b1.Conn.CloseNow()
	// The turn waits again, and the viewers' streaming text is cleared.
	owner.Next(func(f wire.Frame) bool { return f.Op == wire.PushStatus && f.Status.Phase == wire.PhaseWaiting })
	viewer.Next(func(f wire.Frame) bool {
		return f.Op == wire.PushPartial && f.Text.Text == "" && f.Text.TurnID == r.TurnID
	})

	b2 := e.dialToken(botTok)
	b2.Hello()
	b2.Send(wire.Command{ID: 2, Op: wire.OpServe})
	if again := b2.Next(func(f wire.Frame) bool { return f.Op == wire.PushTurn }); again.Turn.TurnID != r.TurnID {
		t.Fatalf("second turn push %+v", again)
	}
	b2.Send(wire.Command{ID: 3, Op: wire.OpReply, TurnID: r.TurnID, Text: "all fine, "})
	b2.Send(wire.Command{ID: 4, Op: wire.OpReply, TurnID: r.TurnID, Text: "thanks", Done: true})
	textO, evO := streamed(owner, r.TurnID, "")
	_, evV := streamed(viewer, r.TurnID, "")
	reply := evO[len(evO)-2]
	if reply.Text != "all fine, thanks" || reply.Author != "helper" || reply.Role != wire.RoleAssistant || evO[len(evO)-1].State != wire.TurnCompleted {
		t.Fatalf("committed %+v, streamed %q", reply, textO)
	}
	if last := evV[len(evV)-2]; last.Text != reply.Text || last.Offset != reply.Offset {
		t.Fatalf("viewer saw %+v", last)
	}
	// The turn is over: a late reply is refused.
	b2.Send(wire.Command{ID: 9, Op: wire.OpReply, TurnID: r.TurnID, Text: "late"})
	if rep := b2.Reply(9); rep.OK || rep.Error.Code != wire.CodeNotServing {
		t.Fatalf("late reply: %+v", rep)
	}
	// So is a reply to a turn this connection never had.
	b2.Send(wire.Command{ID: 10, Op: wire.OpReply, TurnID: "someone-elses", Text: "x"})
	if rep := b2.Reply(10); rep.OK || rep.Error.Code != wire.CodeNotServing {
		t.Fatalf("foreign reply: %+v", rep)
	}
}

// A bot's post is a message with role bot and the bot as author; it
// starts no turn and is idempotent.
func TestBotPost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	s := e.create("s")
	b := e.dialToken(e.botToken("poster")).HelloFromStart(s)
	var events []*wire.Event
	for i := range 2 {
		b.Send(wire.Command{ID: int64(10 + i), Op: wire.OpPost, Session: "s", InputID: uuid1, Text: "a note"})
		frames := b.Until(isReplyTo(int64(10 + i)))
		rep := frames[len(frames)-1]
		if !rep.Reply.OK || rep.Reply.Receipt.Delivery != wire.DeliveryDone || rep.Reply.Receipt.TurnID != "" {
			t.Fatalf("post %d: %+v %+v", i, rep.Reply.Error, rep.Reply.Receipt)
		}
		for _, f := range frames {
			if f.Op == wire.PushEvent {
				events = append(events, f.Event)
			}
		}
	}
	if len(events) == 0 {
		events = append(events, b.Next(func(f wire.Frame) bool { return f.Op == wire.PushEvent }).Event)
	}
	ev := events[0]
	if ev.Role != wire.RoleBot || ev.Author != "poster" || ev.Text != "a note" {
		t.Fatalf("posted event %+v", ev)
	}
	var st wire.Status
	e.do("GET", "/v1/sessions/s/status", nil, "", &st)
	if st.Phase != wire.PhaseIdle || st.Head != 1 || st.LastTurn != nil {
		t.Fatalf("a post started something: %+v", st)
	}
}

// An input_id names one input of a session, sent or posted: a bot's post
// reusing a send's id with other text is conflict, and so is a send
// reusing a post's.
func TestPostAndSendShareInputIDs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	s := e.create("s")
	const sent, posted = "0190a8a0-0000-7000-8000-0000000000a1", "0190a8a0-0000-7000-8000-0000000000a2"
	if code, _ := e.do("PUT", "/v1/sessions/s/inputs/"+sent, nil, `{"text":"from a person"}`, nil); code != 202 {
		t.Fatalf("send: %d", code)
	}
	b := e.dialToken(e.botToken("poster")).HelloFromStart(s)
	b.Send(wire.Command{ID: 1, Op: wire.OpPost, Session: "s", InputID: sent, Text: "from a bot"})
	frames := b.Until(isReplyTo(1))
	if rep := frames[len(frames)-1].Reply; rep.OK || rep.Error.Code != wire.CodeConflict {
		t.Fatalf("a post reusing a send's id: %+v %+v", rep.Error, rep.Receipt)
	}
	b.Send(wire.Command{ID: 2, Op: wire.OpPost, Session: "s", InputID: posted, Text: "from a bot"})
	frames = b.Until(isReplyTo(2))
	if rep := frames[len(frames)-1].Reply; !rep.OK {
		t.Fatalf("post: %+v", rep.Error)
	}
	var er wire.ErrorBody
	if code, _ := e.do("PUT", "/v1/sessions/s/inputs/"+posted, nil, `{"text":"from a person"}`, &er); code != 409 || er.Error.Code != wire.CodeConflict {
		t.Fatalf("a send reusing a post's id: %d %+v", code, er)
	}
}

// Interrupting a bot-served turn commits what the bot streamed; the bot's
// next reply to it is refused.
func TestInterruptBotTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	tok := e.botToken("slow")
	s := e.createWith("s", `{"provider":"bot:slow"}`)
	b := e.dialToken(tok)
	b.Hello()
	b.Send(wire.Command{ID: 2, Op: wire.OpServe})
	b.Reply(2)
	owner := e.dial(true).HelloFromStart(s)
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"go"}`, &r)
	b.Next(func(f wire.Frame) bool { return f.Op == wire.PushTurn })
	b.Send(wire.Command{ID: 3, Op: wire.OpReply, TurnID: r.TurnID, Text: "thinking"})
	b.Reply(3)
	owner.Next(func(f wire.Frame) bool { return f.Op == wire.PushDelta })
	var in wire.Interrupted
	e.do("POST", "/v1/sessions/s/interrupt", nil, "", &in)
	if !in.Interrupted || in.TurnID != r.TurnID {
		t.Fatalf("interrupt %+v", in)
	}
	_, evs := streamed(owner, r.TurnID, "")
	if m := evs[len(evs)-2]; m.Text != "thinking" || m.State != wire.MessageInterrupted {
		t.Fatalf("interrupted bot reply %+v", m)
	}
	b.Send(wire.Command{ID: 4, Op: wire.OpReply, TurnID: r.TurnID, Text: "done", Done: true})
	if rep := b.Reply(4); rep.OK || rep.Error.Code != wire.CodeNotServing {
		t.Fatalf("reply after interrupt: %+v", rep)
	}
}

// A bot's transcript past the daemon's bounds says so: its turn push has
// earlier, and a transcript that is whole has not.
func TestBotIsToldOfEarlierMessages(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, Options{}, hub.Options{MaxTranscriptMessages: 2})
	botTok := e.botToken("helper")
	e.createWith("s", `{"provider":"bot:helper"}`)
	b := e.dialToken(botTok)
	b.Hello()
	b.Send(wire.Command{ID: 2, Op: wire.OpServe})
	for i, want := range []struct {
		msgs    int
		earlier bool
	}{{1, false}, {2, true}} {
		var r wire.Receipt
		e.do("PUT", inputPath("s", i+1), nil, `{"text":"question"}`, &r)
		turn := b.Next(func(f wire.Frame) bool { return f.Op == wire.PushTurn && f.Turn.TurnID == r.TurnID })
		if len(turn.Turn.Messages) != want.msgs || turn.Turn.Earlier != want.earlier {
			t.Fatalf("turn %d: %d messages, earlier %v; want %d, %v", i+1, len(turn.Turn.Messages), turn.Turn.Earlier, want.msgs, want.earlier)
		}
		b.Send(wire.Command{ID: int64(10 + i), Op: wire.OpReply, TurnID: r.TurnID, Text: "answer", Done: true})
		e.settle("s", i+1)
	}
}
