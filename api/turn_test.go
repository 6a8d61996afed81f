package api

import (
	"strings"
	"testing"

	"albedo/hub"
	"albedo/hub/provider"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// newFakeEnv runs the stack with provider "fake" pointing at a fake
// OpenAI-compatible endpoint.
func newFakeEnv(t *testing.T) (*env, *fakeopenai.Server) {
	t.Helper()
	return newFakeEnvAs(t, "fake", nil)
}

// newFakeEnvAs is newFakeEnv with the profile called name, set further by
// tune (prices, a system text, titles) when it is not nil.
func newFakeEnvAs(t *testing.T, name string, tune func(*provider.Profile)) (*env, *fakeopenai.Server) {
	t.Helper()
	f, err := fakeopenai.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	p := provider.Profile{Kind: "openai", BaseURL: f.URL, DefaultModel: "fake-model"}
	if tune != nil {
		tune(&p)
	}
	reg, err := provider.NewRegistry(provider.Config{Providers: map[string]provider.Profile{name: p}}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return newEnvWith(t, Options{}, hub.Options{Providers: reg}), f
}

// turnEnv is the setup of a turn test: the stack with provider "fake",
// session "s" and its owner watching it.
type turnEnv struct {
	*env
	fake *fakeopenai.Server
	s    wire.Session // "s" as created
	w    *wsClient    // the owner, subscribed to s from its start
}

// newTurnEnv creates "s" with the create body (a JSON wire.SessionCreate)
// on a newFakeEnv and subscribes the owner to it before any input, so w
// sees every event. Every piece closes itself when the test ends.
func newTurnEnv(t *testing.T, create string) *turnEnv {
	t.Helper()
	e, f := newFakeEnv(t)
	s := e.createWith("s", create)
	return &turnEnv{env: e, fake: f, s: s, w: e.dial(true).HelloFromStart(s)}
}

func (e *env) createWith(id, body string) wire.Session {
	e.t.Helper()
	var s wire.Session
	if code, _ := e.do("PUT", "/v1/sessions/"+id, map[string]string{"If-None-Match": "*"}, body, &s); code != 201 {
		e.t.Fatalf("create %s: %d", id, code)
	}
	return s
}

func inputPath(session string, n int) string {
	return "/v1/sessions/" + session + "/inputs/0190a8a0-0000-7000-8000-" + strings.Repeat("0", 11) + string(rune('0'+n))
}

// streamed collects, from one viewer, the reply text of turn as pushes
// show it (partials replace, deltas append onto text, what the viewer had so
// far) until the turn's closing event, and returns that text with the
// committed events seen.
func streamed(w *wsClient, turn, text string) (string, []wire.Event) {
	w.T.Helper()
	var evs []wire.Event
	for {
		f := w.Next(func(f wire.Frame) bool {
			return (f.Op == wire.PushPartial || f.Op == wire.PushDelta) && f.Text.TurnID == turn || f.Op == wire.PushEvent
		})
		switch f.Op {
		case wire.PushPartial:
			text = f.Text.Text
		case wire.PushDelta:
			text += f.Text.Text
		case wire.PushEvent:
			evs = append(evs, *f.Event)
			if f.Event.Type == wire.EventTurn && f.Event.TurnID == turn && f.Event.State != wire.TurnStarted {
				return text, evs
			}
		}
	}
}

// replyOf reads w's pushes until turn ends and returns its reply as a
// viewer shows it: the committed message's text. A viewer that falls
// behind a short reply is sent the message in place of deltas that were
// not yet written to it, so what streamed may be any prefix of it.
func replyOf(w *wsClient, turn string) string {
	w.T.Helper()
	text, evs := streamed(w, turn, "")
	for _, ev := range evs {
		if ev.Type == wire.EventMessage && ev.TurnID == turn && ev.Role == wire.RoleAssistant {
			if !strings.HasPrefix(ev.Text, text) {
				w.T.Fatalf("streamed %q, committed %q", text, ev.Text)
			}
			return ev.Text
		}
	}
	return text
}

// seenText reads w's pushes until the streaming text it has been shown is
// want, and returns that text with the committed events seen meanwhile.
func seenText(w *wsClient, want string) (string, []wire.Event) {
	w.T.Helper()
	var text string
	var evs []wire.Event
	for text != want {
		f := w.Next(func(f wire.Frame) bool {
			return f.Op == wire.PushDelta || f.Op == wire.PushPartial || f.Op == wire.PushEvent
		})
		switch f.Op {
		case wire.PushEvent:
			evs = append(evs, *f.Event)
		case wire.PushPartial:
			text = f.Text.Text
		default:
			text += f.Text.Text
		}
	}
	return text, evs
}

// Two viewers see the same streamed text and the same committed events; a
// viewer subscribing mid-turn gets the text so far as a partial, then the
// rest.
func TestTurnStreamsToEveryViewer(t *testing.T) {
	t.Parallel()
	e := newTurnEnv(t, `{"provider":"fake"}`)
	a, b := e.w, e.dial(true).HelloFromStart(e.s)

	release := make(chan struct{})
	e.fake.Push(fakeopenai.Reply{Chunks: []string{"one ", "two "}, Block: release})
	e.fake.Push(fakeopenai.Reply{Chunks: []string{"three"}})
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"go"}`, &r)
	<-e.fake.Arrived()

	// Wait until a and b have both seen both chunks (a viewer whose writer
	// is behind when the turn closes is never sent its text: the contract
	// drops text after its turn's closing event), then let c arrive
	// mid-turn.
	soFar, preA := seenText(a, "one two ")
	soFarB, preB := seenText(b, "one two ")
	c := e.dial(true)
	win := 0
	c.Hello(wire.Sub{Session: "s", Window: &win})
	// After the sub: status (running this turn), presence, then the partial.
	st := c.Next(func(f wire.Frame) bool { return f.Op == wire.PushStatus })
	if st.Status.Phase != wire.PhaseRunning || st.Status.TurnID != r.TurnID {
		t.Fatalf("status %+v", st)
	}
	p := c.Next(func(f wire.Frame) bool { return f.Op == wire.PushPartial })
	if p.Text.Text != "one two " || p.Text.TurnID != r.TurnID {
		t.Fatalf("mid-turn partial %+v", p)
	}
	close(release)

	ta, evA := streamed(a, r.TurnID, soFar)
	evA = append(preA, evA...)
	tb, evB := streamed(b, r.TurnID, soFarB)
	evB = append(preB, evB...)
	tc, _ := streamed(c, r.TurnID, p.Text.Text)
	if ta != "one two " || tb != "one two " || tc != "one two " {
		t.Fatalf("streamed texts a=%q b=%q c=%q", ta, tb, tc)
	}
	if len(evA) != len(evB) {
		t.Fatalf("viewers saw %d and %d events", len(evA), len(evB))
	}
	for i := range evA {
		if evA[i].Offset != evB[i].Offset || evA[i].Type != evB[i].Type || evA[i].Text != evB[i].Text {
			t.Fatalf("event %d differs: %+v vs %+v", i, evA[i], evB[i])
		}
	}
	reply := evB[len(evB)-2]
	if reply.Role != wire.RoleAssistant || reply.Text != "one two " || reply.State != wire.MessageComplete || reply.Author != "fake-model" {
		t.Fatalf("committed reply %+v", reply)
	}
}

// Interrupting a blocked turn commits what streamed as an interrupted
// message with a turn event of reason "user"; the session then answers the
// next input normally.
func TestInterruptBlockedTurn(t *testing.T) {
	t.Parallel()
	e := newTurnEnv(t, `{"provider":"fake"}`)
	w := e.w

	block := make(chan struct{})
	defer close(block)
	e.fake.Push(fakeopenai.Reply{Chunks: []string{"half an ", "answer"}, Block: block})
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"long question"}`, &r)
	w.Next(func(f wire.Frame) bool { return f.Op == wire.PushDelta && strings.Contains(f.Text.Text, "answer") })

	// The reply to interrupt comes once the interrupted turn is committed;
	// replies may overtake pushes, so the events come before or after it.
	w.Send(wire.Command{ID: 50, Op: wire.OpInterrupt, Session: "s"})
	frames := w.Until(isReplyTo(50))
	rep := frames[len(frames)-1]
	if !rep.Reply.OK || rep.Reply.Interrupted == nil || !*rep.Reply.Interrupted || rep.Reply.TurnID != r.TurnID {
		t.Fatalf("interrupt reply %+v", rep)
	}
	var evs []wire.Event
	closed := false
	for _, f := range frames {
		if f.Op == wire.PushEvent {
			evs = append(evs, *f.Event)
			closed = closed || f.Event.Type == wire.EventTurn && f.Event.State != wire.TurnStarted
		}
	}
	if !closed {
		_, more := streamed(w, r.TurnID, "")
		evs = append(evs, more...)
	}
	msg, turn := evs[len(evs)-2], evs[len(evs)-1]
	if msg.State != wire.MessageInterrupted || msg.Text != "half an answer" || turn.State != wire.TurnInterrupted || turn.Reason != wire.ReasonUser {
		t.Fatalf("interrupted turn: %+v %+v", msg, turn)
	}
	var rc wire.Receipt
	e.do("GET", inputPath("s", 1), nil, "", &rc)
	if rc.Delivery != wire.DeliveryInterrupted {
		t.Fatalf("delivery %q", rc.Delivery)
	}
	var st wire.Status
	e.do("GET", "/v1/sessions/s/status", nil, "", &st)
	if st.Phase != wire.PhaseIdle || st.LastTurn == nil || *st.LastTurn != wire.TurnInterrupted {
		t.Fatalf("status after interrupt %+v", st)
	}
	// Nothing runs now: interrupt says so.
	var none wire.Interrupted
	e.do("POST", "/v1/sessions/s/interrupt", nil, "", &none)
	if none.Interrupted {
		t.Fatalf("interrupt of an idle session: %+v", none)
	}

	var r2 wire.Receipt
	e.do("PUT", inputPath("s", 2), nil, `{"text":"again"}`, &r2)
	_, evs = streamed(w, r2.TurnID, "")
	if reply := evs[len(evs)-2]; reply.Text != "fake: again" || reply.State != wire.MessageComplete {
		t.Fatalf("next turn's reply %+v", reply)
	}
	// The provider saw the interrupted reply as context of the second turn.
	reqs := e.fake.Requests()
	if len(reqs) != 2 || len(reqs[1].Messages) != 3 {
		t.Fatalf("second request had %d messages", len(reqs[1].Messages))
	}
}

// The session's model and effort drive each request; a cleared effort is
// not sent.
func TestModelAndEffortReachTheProvider(t *testing.T) {
	t.Parallel()
	e := newTurnEnv(t, `{"provider":"fake","model":"m1","effort":"high","title":"titled: no title of albedo's moves its etag"}`)
	turn := func(n int) {
		var r wire.Receipt
		e.do("PUT", inputPath("s", n), nil, `{"text":"q"}`, &r)
		streamed(e.w, r.TurnID, "")
	}
	turn(1)
	// A new model keeps its effort unless changed.
	var p wire.Session
	e.do("PATCH", "/v1/sessions/s", map[string]string{"If-Match": e.s.ETag}, `{"model":"m2"}`, &p)
	turn(2)
	e.do("PATCH", "/v1/sessions/s", map[string]string{"If-Match": p.ETag}, `{"effort":""}`, &p)
	turn(3)
	reqs := e.fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	effort := func(i int) string {
		if reqs[i].ReasoningEffort == nil {
			return "<none>"
		}
		return *reqs[i].ReasoningEffort
	}
	got := reqs[0].Model + "/" + effort(0) + " " + reqs[1].Model + "/" + effort(1) + " " + reqs[2].Model + "/" + effort(2)
	if want := "m1/high m2/high m2/<none>"; got != want {
		t.Fatalf("requests %q, want %q", got, want)
	}
	if _, sent := reqs[2].Raw["reasoning_effort"]; sent {
		t.Fatalf("cleared effort was sent: %v", reqs[2].Raw)
	}
}

// Each kind of provider failure fails the turn with a readable error, and
// the daemon keeps serving.
func TestProviderFailuresFailTheTurn(t *testing.T) {
	t.Parallel()
	e := newTurnEnv(t, `{"provider":"fake"}`)
	cases := []struct {
		reply fakeopenai.Reply
		want  string
	}{
		{fakeopenai.Reply{Status: 401, Message: "invalid key"}, "HTTP 401: invalid key"},
		{fakeopenai.Reply{Status: 503, Message: "overloaded"}, "HTTP 503: overloaded"},
		{fakeopenai.Reply{Chunks: []string{"cut "}, Break: true}, "stream broke"},
	}
	for i, tc := range cases {
		e.fake.Push(tc.reply)
		var r wire.Receipt
		e.do("PUT", inputPath("s", i+1), nil, `{"text":"q"}`, &r)
		_, evs := streamed(e.w, r.TurnID, "")
		turn := evs[len(evs)-1]
		if turn.State != wire.TurnFailed || !strings.Contains(turn.Error, tc.want) {
			t.Fatalf("case %d: turn %+v, want error containing %q", i, turn, tc.want)
		}
		var rc wire.Receipt
		e.do("GET", inputPath("s", i+1), nil, "", &rc)
		if rc.Delivery != wire.DeliveryFailed || !strings.Contains(rc.Error, tc.want) {
			t.Fatalf("case %d: receipt %+v", i, rc)
		}
	}
	// Still serving.
	var r wire.Receipt
	e.do("PUT", inputPath("s", 9), nil, `{"text":"fine"}`, &r)
	if _, evs := streamed(e.w, r.TurnID, ""); evs[len(evs)-1].State != wire.TurnCompleted {
		t.Fatalf("after failures: %+v", evs[len(evs)-1])
	}
}

// Inputs run one at a time in acceptance order; status shows the queue.
func TestTurnsQueueInOrder(t *testing.T) {
	t.Parallel()
	e := newTurnEnv(t, `{"provider":"fake"}`)
	w := e.w
	release := make(chan struct{})
	e.fake.Push(fakeopenai.Reply{Chunks: []string{"first"}, Block: release})
	var receipts []wire.Receipt
	for i := 1; i <= 3; i++ {
		var r wire.Receipt
		e.do("PUT", inputPath("s", i), nil, `{"text":"q`+string(rune('0'+i))+`"}`, &r)
		receipts = append(receipts, r)
	}
	// Wait for the steady state until release: turn 1 running, two
	// queued. (A status written before the runner took input 1 off the
	// queue could say idle with two queued; it is not the one awaited.)
	w.Next(func(f wire.Frame) bool {
		return f.Op == wire.PushStatus && f.Status.Queued == 2 && f.Status.Phase == wire.PhaseRunning && f.Status.TurnID == receipts[0].TurnID
	})
	close(release)
	for i, r := range receipts {
		_, evs := streamed(w, r.TurnID, "")
		if evs[len(evs)-1].State != wire.TurnCompleted {
			t.Fatalf("turn %d: %+v", i, evs[len(evs)-1])
		}
	}
	reqs := e.fake.Requests()
	for i, req := range reqs {
		if want := "q" + string(rune('1'+i)); req.LastUser() != want {
			t.Fatalf("request %d answered %q, want %q", i, req.LastUser(), want)
		}
	}
	w.Next(func(f wire.Frame) bool {
		return f.Op == wire.PushStatus && f.Status.Phase == wire.PhaseIdle && f.Status.Queued == 0
	})
}

func TestUnknownProviderRefused(t *testing.T) {
	t.Parallel()
	e, _ := newFakeEnv(t)
	var body wire.ErrorBody
	code, _ := e.do("POST", "/v1/sessions", nil, `{"provider":"nope"}`, &body)
	if code != 400 || body.Error.Code != wire.CodeBadRequest || !strings.Contains(body.Error.Message, "unknown provider") {
		t.Fatalf("%d %+v", code, body.Error)
	}
}

// A viewer catching up on a session's history while a turn streams is
// shown the turn's text only after the turn's start: within a session,
// pushes follow the order things happened. Before, the text due to every
// cursor went out with the first batch of old events.
func TestCatchUpGetsStreamingTextAfterItsTurn(t *testing.T) {
	t.Parallel()
	e := newTurnEnv(t, `{"provider":"fake"}`)
	// About 100 KiB of history: more than one message (64 KiB) of
	// catch-up.
	big := strings.Repeat("h", 16<<10)
	for i := 1; i <= 6; i++ {
		e.fake.Push(fakeopenai.Reply{Chunks: []string{"ok"}})
		var r wire.Receipt
		e.do("PUT", inputPath("s", i), nil, `{"text":"`+big+`"}`, &r)
		streamed(e.w, r.TurnID, "")
	}
	release := make(chan struct{})
	defer close(release)
	e.fake.Push(fakeopenai.Reply{Chunks: []string{"streaming "}, Block: release})
	var r wire.Receipt
	e.do("PUT", inputPath("s", 7), nil, `{"text":"go"}`, &r)
	seenText(e.w, "streaming ")

	c := e.dial(true).HelloFromStart(e.s) // from the first event
	started := map[string]bool{}
	for {
		f := c.Next(func(f wire.Frame) bool {
			return f.Op == wire.PushEvent || f.Op == wire.PushPartial || f.Op == wire.PushDelta
		})
		if f.Op == wire.PushEvent {
			if f.Event.Type == wire.EventTurn && f.Event.State == wire.TurnStarted {
				started[f.Event.TurnID] = true
			}
			continue
		}
		if !started[f.Text.TurnID] {
			t.Fatalf("text of turn %s before its start (turns started so far: %d)", f.Text.TurnID, len(started))
		}
		if f.Text.TurnID != r.TurnID || f.Text.Text != "streaming " {
			t.Fatalf("text %+v", f.Text)
		}
		return
	}
}
