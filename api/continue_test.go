package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"albedo/hub"
	"albedo/hub/provider/fakeanthropic"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// cutOff sends text as input n of session and interrupts its reply once
// it streamed what block holds it at; it returns the cut-off message.
func (e *env) cutOff(session string, n int, text string) wire.Event {
	e.t.Helper()
	w := e.watchFromStart(session)
	var r wire.Receipt
	if code, _ := e.do("PUT", inputPath(session, n), nil, fmt.Sprintf(`{"text":%q}`, text), &r); code != http.StatusAccepted {
		e.t.Fatalf("input: %d", code)
	}
	w.Next(func(f wire.Frame) bool {
		return (f.Op == wire.PushDelta || f.Op == wire.PushPartial) && f.Text.TurnID == r.TurnID && f.Text.Text != ""
	})
	if code, _ := e.do("POST", "/v1/sessions/"+session+"/interrupt", nil, "", nil); code != 200 {
		e.t.Fatalf("interrupt: %d", code)
	}
	return *w.Next(func(f wire.Frame) bool {
		return f.Op == wire.PushEvent && f.Event.Type == wire.EventMessage && f.Event.TurnID == r.TurnID
	}).Event
}

// turnOf reads session from its start until turn closes, and returns the
// turn's events.
func (e *env) turnOf(session, turn string) []wire.Event {
	e.t.Helper()
	w := e.watchFromStart(session)
	var out []wire.Event
	for {
		ev := *w.Next(func(f wire.Frame) bool { return f.Op == wire.PushEvent && f.Event.TurnID == turn }).Event
		out = append(out, ev)
		if ev.Type == wire.EventTurn && ev.State != wire.TurnStarted {
			return out
		}
	}
}

// A reply cut off by an interrupt is continued: its input runs again as a
// new turn whose model is sent the reply so far (OpenAI's format: asked
// after it to go on; Anthropic's: handed it last, to continue), and the
// rest is a message that names the reply it continues, as its turn's start
// does. A whole reply, a
// running turn and a reply that said nothing have nothing to continue.
func TestAReplyCutOffIsContinued(t *testing.T) {
	t.Parallel()
	e, fo, fa := filesEnv(t)
	e.createWith("g", `{"provider":"gpt"}`)
	block := make(chan struct{})
	defer close(block)
	fo.Push(fakeopenai.Reply{Chunks: []string{"half an "}, Block: block}, fakeopenai.Reply{Chunks: []string{"answer, whole."}})
	cut := e.cutOff("g", 1, "a long question")
	if cut.State != wire.MessageInterrupted || cut.Text != "half an " {
		t.Fatalf("the cut-off reply: %+v", cut)
	}
	var c wire.Continued
	if code, _ := e.do("POST", "/v1/sessions/g/continue", nil, "", &c); code != http.StatusAccepted || c.TurnID == "" {
		t.Fatalf("continue: %d %+v", code, c)
	}
	evs := e.turnOf("g", c.TurnID)
	msg := evs[len(evs)-2]
	if msg.Text != "answer, whole." || msg.Continues != cut.Offset || msg.InputID != cut.InputID || msg.State != wire.MessageComplete || evs[len(evs)-1].State != wire.TurnCompleted {
		t.Fatalf("the continuation: %+v", evs)
	}
	// Its start says so too: clients show its stream as the reply's rest.
	if evs[0].State != wire.TurnStarted || evs[0].Continues != cut.Offset {
		t.Fatalf("the continuation's start: %+v", evs[0])
	}
	reqs := fo.Requests()
	sent := texts(reqs[len(reqs)-1])
	if want := []string{"user:a long question", "assistant:half an ", "user:" + hub.ContinueAsk}; strings.Join(sent, "|") != strings.Join(want, "|") {
		t.Fatalf("the model was sent %q, want %q", sent, want)
	}
	var er wire.ErrorBody
	if code, _ := e.do("POST", "/v1/sessions/g/continue", nil, "", &er); code != http.StatusConflict || !strings.Contains(er.Error.Message, "whole") {
		t.Fatalf("continue a whole reply: %d %+v", code, er)
	}

	e.createWith("c", `{"provider":"claude"}`)
	ablock := make(chan struct{})
	defer close(ablock)
	fa.Push(fakeanthropic.Reply{Chunks: []string{"Once upon "}, Block: ablock}, fakeanthropic.Reply{Chunks: []string{"a time."}})
	cut = e.cutOff("c", 1, "tell a story")
	if code, _ := e.do("POST", "/v1/sessions/c/continue", nil, "", &c); code != http.StatusAccepted {
		t.Fatalf("continue with anthropic: %d", code)
	}
	evs = e.turnOf("c", c.TurnID)
	if msg := evs[len(evs)-2]; msg.Text != "a time." || msg.Continues != cut.Offset {
		t.Fatalf("anthropic's continuation: %+v", evs)
	}
	areqs := fa.Requests()
	last := areqs[len(areqs)-1].Messages
	if m := last[len(last)-1]; m.Role != "assistant" || len(m.Content) != 1 || m.Content[0].Text != "Once upon" {
		t.Fatalf("anthropic was not handed the reply to continue: %+v", last)
	}

	e.create("echoed") // echo answers at once: whole
	e.say("echoed", "hi")
	e.settle("echoed", 1)
	if code, _ := e.do("POST", "/v1/sessions/echoed/continue", nil, "", nil); code != http.StatusConflict {
		t.Fatalf("continue echo's whole reply: %d", code)
	}
	if code, _ := e.do("POST", "/v1/sessions/nosuch/continue", nil, "", nil); code != http.StatusNotFound {
		t.Fatalf("no such session: %d", code)
	}
}
