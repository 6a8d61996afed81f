package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"albedo/hub"
	"albedo/hub/provider"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// toolEnv is a daemon whose default provider is a fake OpenAI endpoint,
// with cfg's [tools] table.
func toolEnv(t *testing.T, cfg provider.ToolsConfig) (*env, *fakeopenai.Server) {
	t.Helper()
	f, err := fakeopenai.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	reg, err := provider.NewRegistry(provider.Config{DefaultProvider: "local", Tools: cfg, Providers: map[string]provider.Profile{
		"local": {BaseURL: f.URL, DefaultModel: "m"},
	}}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return newEnvWith(t, Options{}, hub.Options{Providers: reg}), f
}

var forecastTool = wire.ToolSpec{Name: "forecast", Description: "The weather of a city.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}

// toolBot connects a bot that serves tools only.
func (e *env) toolBot(name string, specs ...wire.ToolSpec) *wsClient {
	e.t.Helper()
	b := e.dialToken(e.botToken(name))
	b.Hello()
	no := false
	b.Send(wire.Command{ID: 2, Op: wire.OpServe, Tools: specs, Turns: &no})
	if r := b.Reply(2); !r.OK {
		e.t.Fatalf("serve: %+v", r.Error)
	}
	return b
}

// toolEvents are the events of a turn past its input, by type.
func toolEvents(evs []wire.Event, from int64) []wire.EventType {
	var out []wire.EventType
	for _, ev := range evs {
		if ev.Offset > from {
			out = append(out, ev.Type)
		}
	}
	return out
}

// The whole call: the model calls a bot's tool; the call asks (the
// default policy), so the turn waits in phase approval with the call
// listed; the owner allows it; the bot gets it, answers, and the model
// gets the result and answers in text. Every step is an event, in order.
// A second decision is a conflict, an unknown call not found, a bad
// decision bad_request, and a viewer may not decide.
func TestAToolCallIsApprovedRunAndAnswered(t *testing.T) {
	t.Parallel()
	e, f := toolEnv(t, provider.ToolsConfig{})
	bot := e.toolBot("weather", forecastTool)
	s := e.create("s")
	watcher := e.dial(true).HelloFromStart(s)

	var tools wire.Tools
	if code, _ := e.do("GET", "/v1/tools?session=s", nil, "", &tools); code != 200 || len(tools.Tools) != 1 ||
		tools.Tools[0].Name != "bot:weather/forecast" || tools.Tools[0].Policy != "ask" {
		t.Fatalf("tools: %d %+v", code, tools)
	}

	f.Push(fakeopenai.Reply{Chunks: []string{"Let me look."}, ToolCalls: []fakeopenai.ToolCall{{ID: "call_x", Name: "bot__weather__forecast", Arguments: `{"city":"Oslo"}`}}},
		fakeopenai.Reply{Chunks: []string{"Snow in Oslo."}})
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"weather?"}`, &r)
	st := watcher.Next(func(f wire.Frame) bool { return f.Op == wire.PushStatus && f.Status.Phase == wire.PhaseApproval })
	if st.Status.Pending != 1 || st.Status.TurnID != r.TurnID {
		t.Fatalf("status %+v", st.Status)
	}
	var ap wire.Approvals
	if code, _ := e.do("GET", "/v1/sessions/s/approvals", nil, "", &ap); code != 200 || len(ap.Approvals) != 1 {
		t.Fatalf("approvals: %d %+v", code, ap)
	}
	a := ap.Approvals[0]
	if a.Tool != "bot:weather/forecast" || string(a.Arguments) != `{"city":"Oslo"}` || a.TurnID != r.TurnID ||
		a.ExpiresAt.Sub(a.RequestedAt) != time.Hour {
		t.Fatalf("approval %+v", a)
	}
	call := a.CallID

	var eb wire.ErrorBody
	if code, _ := e.do("POST", "/v1/sessions/s/approvals/"+call, e.as(e.viewerToken("s")), `{"decision":"allow"}`, &eb); code != 403 {
		t.Fatalf("a viewer decided: %d", code)
	}
	if code, _ := e.do("POST", "/v1/sessions/s/approvals/"+call, nil, `{"decision":"maybe"}`, &eb); code != 400 {
		t.Fatalf("a bad decision: %d", code)
	}
	if code, _ := e.do("POST", "/v1/sessions/s/approvals/0190a8a0-0000-7000-8000-000000000000", nil, `{"decision":"allow"}`, &eb); code != 404 {
		t.Fatalf("an unknown call: %d", code)
	}
	var approval wire.Event
	if code, _ := e.do("POST", "/v1/sessions/s/approvals/"+call, nil, `{"decision":"allow","reason":"fine"}`, &approval); code != 200 ||
		approval.Type != wire.EventApproval || approval.Decision != "allow" || approval.CallID != call || approval.Reason != "fine" ||
		approval.Author == "" || approval.TurnID != r.TurnID || approval.Offset == 0 {
		t.Fatalf("decide: %d %+v", code, approval)
	}
	if code, _ := e.do("POST", "/v1/sessions/s/approvals/"+call, nil, `{"decision":"deny"}`, &eb); code != 409 || eb.Error.Code != wire.CodeConflict {
		t.Fatalf("a second decision: %d %+v", code, eb.Error)
	}

	push := bot.Next(func(f wire.Frame) bool { return f.Op == wire.PushTool })
	if push.Tool.CallID != call || push.Tool.Tool != "forecast" || push.Tool.Session != "s" || string(push.Tool.Arguments) != `{"city":"Oslo"}` {
		t.Fatalf("tool push %+v", push.Tool)
	}
	bot.Send(wire.Command{ID: 3, Op: wire.OpToolResult, CallID: call, Output: "snow, -4 °C"})
	if rep := bot.Reply(3); !rep.OK {
		t.Fatalf("tool_result: %+v", rep.Error)
	}
	bot.Send(wire.Command{ID: 4, Op: wire.OpToolResult, CallID: call, Output: "again"})
	if rep := bot.Reply(4); rep.OK || rep.Error.Code != wire.CodeNotServing {
		t.Fatalf("a second result: %+v", rep)
	}

	streamed(watcher, r.TurnID, "")
	evs := e.events("s")
	got := toolEvents(evs, 0)
	want := []wire.EventType{wire.EventMessage, wire.EventTurn, wire.EventToolCall, wire.EventApproval, wire.EventToolResult, wire.EventMessage, wire.EventTurn}
	if strings.Join(types(got), " ") != strings.Join(types(want), " ") {
		t.Fatalf("events %v", got)
	}
	tc, res, reply, end := evs[2], evs[4], evs[5], evs[6]
	if tc.CallID != call || tc.Tool != "bot:weather/forecast" || tc.Policy != "ask" || tc.Text != "Let me look." || tc.Author != "m" ||
		string(tc.Arguments) != `{"city":"Oslo"}` {
		t.Fatalf("tool_call %+v", tc)
	}
	if res.State != wire.ToolCompleted || res.Text != "snow, -4 °C" || res.CallID != call {
		t.Fatalf("tool_result %+v", res)
	}
	if reply.Text != "Snow in Oslo." || end.State != wire.TurnCompleted {
		t.Fatalf("reply %+v, end %+v", reply, end)
	}
	// The model got its call and the result back, under its call id.
	second := f.Requests()[1]
	last := string(second.Messages[len(second.Messages)-1])
	if !strings.Contains(last, `"role":"tool"`) || !strings.Contains(last, call) || !strings.Contains(last, "snow, -4") {
		t.Fatalf("results sent: %s", last)
	}
	if len(second.Tools) != 1 {
		t.Fatalf("tools offered: %d", len(second.Tools))
	}
	if code, _ := e.do("GET", "/v1/sessions/s/approvals", nil, "", &ap); code != 200 || len(ap.Approvals) != 0 {
		t.Fatalf("approvals after: %+v", ap)
	}
}

// events is a session's log, decoded.
func (e *env) events(id string) []wire.Event {
	e.t.Helper()
	var out []wire.Event
	for _, raw := range e.history(id) {
		var ev wire.Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

func types(ts []wire.EventType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}
