package api

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"albedo/hub"
	"albedo/hub/provider"
	"albedo/hub/provider/fakeanthropic"
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
	return e.toolBotOf(e.botToken(name), specs...)
}

// toolBotOf connects another connection of a bot, by its token.
func (e *env) toolBotOf(token string, specs ...wire.ToolSpec) *wsClient {
	e.t.Helper()
	b := e.dialToken(token)
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

// waitApproval waits until the session's turn waits for n decisions and
// returns the pending calls.
func (e *env) waitApproval(w *wsClient, session string, n int) []wire.Approval {
	e.t.Helper()
	w.Next(func(f wire.Frame) bool {
		return f.Op == wire.PushStatus && f.Session == session && f.Status.Phase == wire.PhaseApproval && f.Status.Pending == n
	})
	var ap wire.Approvals
	if code, _ := e.do("GET", "/v1/sessions/"+session+"/approvals", nil, "", &ap); code != 200 || len(ap.Approvals) != n {
		e.t.Fatalf("approvals: %d %+v", code, ap)
	}
	return ap.Approvals
}

// turnEvents waits for the end of a turn and returns its tool events
// (tool_call, approval, tool_result), by call id and type.
func (e *env) turnEvents(w *wsClient, session, turn string) (map[string]map[wire.EventType]wire.Event, wire.Event) {
	e.t.Helper()
	streamed(w, turn, "")
	out := map[string]map[wire.EventType]wire.Event{}
	var end wire.Event
	for _, ev := range e.events(session) {
		if ev.TurnID != turn {
			continue
		}
		if ev.CallID != "" {
			if out[ev.CallID] == nil {
				out[ev.CallID] = map[wire.EventType]wire.Event{}
			}
			out[ev.CallID][ev.Type] = ev
		}
		if ev.Type == wire.EventTurn && ev.State != wire.TurnStarted {
			end = ev
		}
	}
	return out, end
}

// The rules decide without asking: allow runs at once, deny is told to the
// model; and what a model gets wrong (a tool not offered, arguments that
// are no JSON object) fails that call alone. Calls of one response are
// each their own, and every one gets its result; the turn goes on.
func TestToolRulesAndAModelsMistakes(t *testing.T) {
	t.Parallel()
	e, f := toolEnv(t, provider.ToolsConfig{Rules: []provider.ToolRule{
		{Match: "bot:weather/*", Policy: "allow"}, {Match: "bot:weather/danger", Policy: "deny"},
	}})
	bot := e.toolBot("weather", forecastTool, wire.ToolSpec{Name: "danger", InputSchema: json.RawMessage(`{"type":"object"}`)})
	s := e.create("s")
	watcher := e.dial(true).HelloFromStart(s)
	f.Push(fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{
		{ID: "a", Name: "bot__weather__forecast", Arguments: `{"city":"Rome"}`},
		{ID: "b", Name: "bot__weather__danger", Arguments: `{}`},
		{ID: "c", Name: "rm_rf", Arguments: `{}`},
		{ID: "d", Name: "bot__weather__forecast", Arguments: `{"city":`},
		{ID: "e", Name: "bot__weather__forecast", Arguments: `[1]`},
	}}, fakeopenai.Reply{Chunks: []string{"Sun in Rome."}})
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"weather?"}`, &r)
	push := bot.Next(func(f wire.Frame) bool { return f.Op == wire.PushTool })
	bot.Send(wire.Command{ID: 3, Op: wire.OpToolResult, CallID: push.Tool.CallID, Output: "sun"})
	calls, end := e.turnEvents(watcher, "s", r.TurnID)
	if end.State != wire.TurnCompleted || len(calls) != 5 {
		t.Fatalf("end %+v, %d calls", end, len(calls))
	}
	byTool := map[string][]wire.Event{}
	for _, c := range calls {
		byTool[c[wire.EventToolCall].Tool] = append(byTool[c[wire.EventToolCall].Tool], c[wire.EventToolResult])
		if _, asked := c[wire.EventApproval]; asked {
			t.Fatalf("a call asked: %+v", c)
		}
	}
	if rs := byTool["bot:weather/danger"]; len(rs) != 1 || rs[0].State != wire.ToolDenied || !strings.Contains(rs[0].Error, "policy denies") {
		t.Fatalf("denied: %+v", rs)
	}
	if rs := byTool["rm_rf"]; len(rs) != 1 || rs[0].State != wire.ToolFailed || !strings.Contains(rs[0].Error, `no tool named "rm_rf"`) {
		t.Fatalf("unknown: %+v", rs)
	}
	var states []string
	for _, r := range byTool["bot:weather/forecast"] {
		states = append(states, r.State+":"+r.Text+r.Error)
	}
	slices.Sort(states)
	if strings.Join(states, "|") != "completed:sun|failed:the arguments are not a JSON object|failed:the arguments are not a JSON object" {
		t.Fatalf("forecasts: %q", states)
	}
	second := f.Requests()[1]
	tools := 0
	for _, m := range second.Messages {
		if strings.Contains(string(m), `"role":"tool"`) {
			tools++
		}
	}
	if tools != 5 {
		t.Fatalf("%d results sent back: %s", tools, second.Messages)
	}
}

// A person's deny is told to the model with who decided and why; an
// allow_session runs the call and every later call of the tool in the
// session without asking, and a fork keeps that.
func TestDenyAndAllowForTheSession(t *testing.T) {
	t.Parallel()
	e, f := toolEnv(t, provider.ToolsConfig{})
	bot := e.toolBot("weather", forecastTool)
	s := e.create("s")
	watcher := e.dial(true).HelloFromStart(s)
	call := fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{ID: "x", Name: "bot__weather__forecast", Arguments: `{"city":"Oslo"}`}}}
	f.Push(call, fakeopenai.Reply{Chunks: []string{"ok"}})
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"one"}`, &r)
	a := e.waitApproval(watcher, "s", 1)[0]
	if code, _ := e.do("POST", "/v1/sessions/s/approvals/"+a.CallID, nil, `{"decision":"deny","reason":"not now"}`, nil); code != 200 {
		t.Fatalf("deny: %d", code)
	}
	calls, end := e.turnEvents(watcher, "s", r.TurnID)
	res := calls[a.CallID][wire.EventToolResult]
	if end.State != wire.TurnCompleted || res.State != wire.ToolDenied || !strings.Contains(res.Error, "denied by") {
		t.Fatalf("end %+v, result %+v", end, res)
	}
	if last := string(f.Requests()[1].Messages[len(f.Requests()[1].Messages)-1]); !strings.Contains(last, "not run") || !strings.Contains(last, "denied by user: not now") {
		t.Fatalf("the model was told %s", last)
	}

	f.Push(call, fakeopenai.Reply{Chunks: []string{"ok"}})
	e.do("PUT", inputPath("s", 2), nil, `{"text":"two"}`, &r)
	a = e.waitApproval(watcher, "s", 1)[0]
	if code, _ := e.do("POST", "/v1/sessions/s/approvals/"+a.CallID, nil, `{"decision":"allow_session"}`, nil); code != 200 {
		t.Fatalf("allow_session: %d", code)
	}
	push := bot.Next(func(f wire.Frame) bool { return f.Op == wire.PushTool })
	bot.Send(wire.Command{ID: 3, Op: wire.OpToolResult, CallID: push.Tool.CallID, Output: "snow"})
	if _, end := e.turnEvents(watcher, "s", r.TurnID); end.State != wire.TurnCompleted {
		t.Fatalf("second turn %+v", end)
	}

	f.Push(call, fakeopenai.Reply{Chunks: []string{"ok"}})
	e.do("PUT", inputPath("s", 3), nil, `{"text":"three"}`, &r)
	push = bot.Next(func(f wire.Frame) bool { return f.Op == wire.PushTool })
	bot.Send(wire.Command{ID: 4, Op: wire.OpToolResult, CallID: push.Tool.CallID, Output: "snow"})
	calls, end = e.turnEvents(watcher, "s", r.TurnID)
	if tc := calls[push.Tool.CallID][wire.EventToolCall]; end.State != wire.TurnCompleted || tc.Policy != "allow" {
		t.Fatalf("third turn %+v, call %+v", end, tc)
	}
	// An export of the session imports whole, tool events and all, byte
	// for byte; a tool_call with arguments that are no object does not.
	e.create("copy")
	orig := e.history("s")
	body, _ := json.Marshal(map[string]any{"events": orig, "done": true})
	if code, _ := e.do("POST", "/v1/sessions/copy/import", nil, string(body), nil); code != 200 {
		t.Fatalf("import: %d", code)
	}
	copied := e.history("copy")
	if len(copied) != len(orig) {
		t.Fatalf("imported %d of %d events", len(copied), len(orig))
	}
	for i := range orig {
		if string(copied[i]) != string(orig[i]) {
			t.Fatalf("event %d: imported %s, was %s", i+1, copied[i], orig[i])
		}
	}
	bad := `{"events":[{"offset":` + fmt.Sprint(len(orig)+1) + `,"type":"tool_call","call_id":"0190a8a0-0000-7000-8000-000000000001","tool":"bot:x/y","policy":"ask","arguments":[1],"at":"2026-01-02T03:04:05Z"}]}`
	if code, _ := e.do("POST", "/v1/sessions/copy/import", nil, bad, nil); code != 400 {
		t.Fatalf("a bad tool_call imported: %d", code)
	}

	fork, _ := e.forkOf("s", `{"at":0}`, 201)
	var tools wire.Tools
	if code, _ := e.do("GET", "/v1/tools?session="+fork.ID, nil, "", &tools); code != 200 || len(tools.Tools) != 1 || tools.Tools[0].Policy != "allow" {
		t.Fatalf("the fork's tools: %d %+v", code, tools)
	}
}

// Deciding over the websocket: a member granted write decides; one
// granted read only, and a bot, are forbidden. Two people deciding at
// once: one wins, the other gets conflict.
func TestApproveOverTheWebsocket(t *testing.T) {
	t.Parallel()
	e, f := toolEnv(t, provider.ToolsConfig{})
	e.toolBot("weather", forecastTool)
	s := e.create("s")
	ann, bob := e.member("ann", false), e.member("bob", false)
	e.grant("s", "ann", wire.AccessWrite)
	e.grant("s", "bob", wire.AccessRead)
	e.answerAll("s")
	annWS := e.dialToken(ann.Token).HelloFromStart(s)
	bobWS := e.dialToken(bob.Token).HelloFromStart(s)
	f.Push(fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{ID: "x", Name: "bot__weather__forecast", Arguments: `{}`}}})
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"one"}`, &r)
	a := e.waitApproval(annWS, "s", 1)[0]

	bobWS.Send(wire.Command{ID: 7, Op: wire.OpApprove, Session: "s", CallID: a.CallID, Decision: "allow"})
	if rep := bobWS.Reply(7); rep.OK || rep.Error.Code != wire.CodeForbidden {
		t.Fatalf("a reader decided: %+v", rep)
	}
	// Nor may a guest (a write link's) or a bot, who may write.
	guest := e.link("s", wire.LinkCreate{Access: wire.AccessWrite})
	for who, tok := range map[string]string{"a guest": guest.Token, "a bot": e.botToken("helper")} {
		if code, _ := e.do("POST", "/v1/sessions/s/approvals/"+a.CallID, e.as(tok), `{"decision":"allow"}`, nil); code != 403 {
			t.Fatalf("%s decided: %d", who, code)
		}
	}
	// ann over the websocket and the owner over HTTP, at once.
	annWS.Send(wire.Command{ID: 8, Op: wire.OpApprove, Session: "s", CallID: a.CallID, Decision: "deny", Reason: "no"})
	code, _ := e.do("POST", "/v1/sessions/s/approvals/"+a.CallID, nil, `{"decision":"allow"}`, nil)
	rep := annWS.Reply(8)
	switch {
	case code == 200 && !rep.OK && rep.Error.Code == wire.CodeConflict:
	case code == 409 && rep.OK && rep.Event != nil && rep.Event.Decision == "deny" && rep.Event.Author == "ann" && rep.Event.Reason == "no":
	default:
		t.Fatalf("HTTP %d, websocket %+v %+v", code, rep, rep.Event)
	}
	approvals := 0
	for _, ev := range e.events("s") {
		if ev.Type == wire.EventApproval {
			approvals++
		}
	}
	if approvals != 1 {
		t.Fatalf("%d approval events", approvals)
	}
}

// An interrupt cancels every pending call of its turn: each gets its
// result, cancelled, and a decision after it is a conflict.
func TestAnInterruptCancelsPendingCalls(t *testing.T) {
	t.Parallel()
	e, f := toolEnv(t, provider.ToolsConfig{})
	e.toolBot("weather", forecastTool)
	s := e.create("s")
	watcher := e.dial(true).HelloFromStart(s)
	f.Push(fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{ID: "x", Name: "bot__weather__forecast", Arguments: `{}`},
		{ID: "y", Name: "bot__weather__forecast", Arguments: `{"city":"Rome"}`}}})
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"one"}`, &r)
	as := e.waitApproval(watcher, "s", 2)
	var in wire.Interrupted
	if code, _ := e.do("POST", "/v1/sessions/s/interrupt", nil, "", &in); code != 200 || !in.Interrupted {
		t.Fatalf("interrupt: %d %+v", code, in)
	}
	calls, end := e.turnEvents(watcher, "s", r.TurnID)
	if end.State != wire.TurnInterrupted {
		t.Fatalf("end %+v", end)
	}
	for _, a := range as {
		if res := calls[a.CallID][wire.EventToolResult]; res.State != wire.ToolCancelled {
			t.Fatalf("call %s: %+v", a.CallID, res)
		}
	}
	if code, _ := e.do("POST", "/v1/sessions/s/approvals/"+as[0].CallID, nil, `{"decision":"allow"}`, nil); code != 409 {
		t.Fatalf("a decision after the interrupt: %d", code)
	}
}

// A call no one decides expires after approval_timeout: the model is
// told it was not approved, and the turn goes on.
func TestAnApprovalExpires(t *testing.T) {
	t.Parallel()
	e, f := toolEnv(t, provider.ToolsConfig{ApprovalTimeout: provider.Duration{Duration: 300 * time.Millisecond}})
	e.toolBot("weather", forecastTool)
	s := e.create("s")
	watcher := e.dial(true).HelloFromStart(s)
	f.Push(fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{ID: "x", Name: "bot__weather__forecast", Arguments: `{}`}}},
		fakeopenai.Reply{Chunks: []string{"I could not look."}})
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"one"}`, &r)
	calls, end := e.turnEvents(watcher, "s", r.TurnID)
	if end.State != wire.TurnCompleted || len(calls) != 1 {
		t.Fatalf("end %+v, calls %+v", end, calls)
	}
	for _, c := range calls {
		if res := c[wire.EventToolResult]; res.State != wire.ToolExpired || !strings.Contains(res.Error, "no one decided within") {
			t.Fatalf("result %+v", res)
		}
	}
	last := string(f.Requests()[1].Messages[len(f.Requests()[1].Messages)-1])
	if !strings.Contains(last, "not run") || !strings.Contains(last, "no one decided") {
		t.Fatalf("the model was told %s", last)
	}
}

// A turn may make at most max_tool_calls calls; past that it fails,
// saying why.
func TestTooManyCallsFailTheTurn(t *testing.T) {
	t.Parallel()
	f, err := fakeopenai.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	reg, err := provider.NewRegistry(provider.Config{DefaultProvider: "local",
		Tools:     provider.ToolsConfig{Rules: []provider.ToolRule{{Match: "*", Policy: "deny"}}},
		Providers: map[string]provider.Profile{"local": {BaseURL: f.URL, DefaultModel: "m", MaxToolCalls: 3}}}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, Options{}, hub.Options{Providers: reg})
	e.toolBot("weather", forecastTool)
	s := e.create("s")
	watcher := e.dial(true).HelloFromStart(s)
	two := fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{ID: "x", Name: "bot__weather__forecast", Arguments: `{}`}, {ID: "y", Name: "bot__weather__forecast", Arguments: `{}`}}}
	f.Push(two, two)
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"one"}`, &r)
	calls, end := e.turnEvents(watcher, "s", r.TurnID)
	if end.State != wire.TurnFailed || !strings.Contains(end.Error, "more than 3 tool calls") || len(calls) != 2 {
		t.Fatalf("end %+v, %d calls", end, len(calls))
	}
}

// A call whose bot connection drops goes to the bot's next connection; a
// bot that does not answer within tool_timeout fails the call.
func TestABotCallFailsOverAndTimesOut(t *testing.T) {
	t.Parallel()
	f, err := fakeopenai.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	reg, err := provider.NewRegistry(provider.Config{DefaultProvider: "local",
		Tools:     provider.ToolsConfig{Rules: []provider.ToolRule{{Match: "*", Policy: "allow"}}},
		Providers: map[string]provider.Profile{"local": {BaseURL: f.URL, DefaultModel: "m", ToolTimeout: provider.Duration{Duration: time.Second}}}}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, Options{}, hub.Options{Providers: reg})
	tok := e.botToken("weather")
	b1 := e.toolBotOf(tok, forecastTool)
	s := e.create("s")
	watcher := e.dial(true).HelloFromStart(s)
	call := fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{ID: "x", Name: "bot__weather__forecast", Arguments: `{}`}}}
	f.Push(call, fakeopenai.Reply{Chunks: []string{"ok"}})
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"one"}`, &r)
	first := b1.Next(func(f wire.Frame) bool { return f.Op == wire.PushTool })
	b2 := e.toolBotOf(tok, forecastTool)
	b1.Conn.CloseNow()
	again := b2.Next(func(f wire.Frame) bool { return f.Op == wire.PushTool })
	if again.Tool.CallID != first.Tool.CallID {
		t.Fatalf("handed on %+v, first %+v", again.Tool, first.Tool)
	}
	b2.Send(wire.Command{ID: 3, Op: wire.OpToolResult, CallID: again.Tool.CallID, Error: "no station"})
	calls, end := e.turnEvents(watcher, "s", r.TurnID)
	if res := calls[first.Tool.CallID][wire.EventToolResult]; end.State != wire.TurnCompleted || res.State != wire.ToolFailed || res.Error != "no station" {
		t.Fatalf("end %+v, result %+v", end, res)
	}

	f.Push(call, fakeopenai.Reply{Chunks: []string{"ok"}})
	e.do("PUT", inputPath("s", 2), nil, `{"text":"two"}`, &r)
	b2.Next(func(f wire.Frame) bool { return f.Op == wire.PushTool }) // and never answered
	calls, end = e.turnEvents(watcher, "s", r.TurnID)
	for _, c := range calls {
		if res := c[wire.EventToolResult]; end.State != wire.TurnCompleted || res.State != wire.ToolFailed || !strings.Contains(res.Error, "did not answer within 1s") {
			t.Fatalf("end %+v, result %+v", end, res)
		}
	}
}

// The bounds of tools, at the edge: what a bot declares (names, count),
// a decision's reason, a tool's output (cut at 256 KiB, saying so) and a
// model's arguments (past 64 KiB the call fails). A bot's tools are
// offered only where the bot may act.
func TestToolBounds(t *testing.T) {
	t.Parallel()
	e, f := toolEnv(t, provider.ToolsConfig{Rules: []provider.ToolRule{{Match: "bot:weather/*", Policy: "allow"}}})
	s := e.create("s")
	e.create("other")
	tok := e.botToken("weather", "s")
	b := e.dialToken(tok)
	b.Hello()
	var many []wire.ToolSpec
	for i := range 129 {
		many = append(many, wire.ToolSpec{Name: fmt.Sprintf("t%d", i), InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	for i, specs := range [][]wire.ToolSpec{
		{{Name: "Bad Name", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		{{Name: "x", InputSchema: json.RawMessage(`[]`)}},
		many,
	} {
		no := false
		b.Send(wire.Command{ID: int64(10 + i), Op: wire.OpServe, Tools: specs, Turns: &no})
		if r := b.Reply(int64(10 + i)); r.OK || r.Error.Code != wire.CodeBadRequest {
			t.Fatalf("serve %d: %+v", i, r)
		}
	}
	bot := e.toolBotOf(tok, forecastTool)
	var tools wire.Tools
	if e.do("GET", "/v1/tools?session=other", nil, "", &tools); len(tools.Tools) != 0 {
		t.Fatalf("offered where the bot may not act: %+v", tools)
	}
	watcher := e.dial(true).HelloFromStart(s)
	f.Push(fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{
		{ID: "a", Name: "bot__weather__forecast", Arguments: `{"city":"` + strings.Repeat("x", provider.MaxArgumentBytes) + `"}`},
		{ID: "b", Name: "bot__weather__forecast", Arguments: `{}`},
	}}, fakeopenai.Reply{Chunks: []string{"ok"}})
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"one"}`, &r)
	push := bot.Next(func(f wire.Frame) bool { return f.Op == wire.PushTool })
	bot.Send(wire.Command{ID: 3, Op: wire.OpToolResult, CallID: push.Tool.CallID, Output: strings.Repeat("é", wire.MaxToolOutput)})
	calls, end := e.turnEvents(watcher, "s", r.TurnID)
	if end.State != wire.TurnCompleted || len(calls) != 2 {
		t.Fatalf("end %+v, %d calls", end, len(calls))
	}
	for id, c := range calls {
		res := c[wire.EventToolResult]
		if id == push.Tool.CallID {
			if res.State != wire.ToolCompleted || len(res.Text) > wire.MaxToolOutput+100 || !strings.HasSuffix(res.Text, "[the output was cut at 262144 of its 524288 bytes]") {
				t.Fatalf("a long output: %d bytes, ends %q (%+v)", len(res.Text), res.Text[max(0, len(res.Text)-60):], res)
			}
			continue
		}
		if res.State != wire.ToolFailed || !strings.Contains(res.Error, "passed the limit of 65536 bytes") || len(c[wire.EventToolCall].Arguments) != 0 {
			t.Fatalf("long arguments: %+v", res)
		}
	}

	if code, _ := e.do("GET", "/v1/tools?session=s", e.as(tok), "", nil); code != 403 {
		t.Fatalf("a bot listed tools: %d", code)
	}
	var eb wire.ErrorBody
	body, _ := json.Marshal(wire.Decision{Decision: "deny", Reason: strings.Repeat("r", wire.MaxReasonBytes+1)})
	if code, _ := e.do("POST", "/v1/sessions/s/approvals/"+push.Tool.CallID, nil, string(body), &eb); code != 413 {
		t.Fatalf("a long reason: %d %+v", code, eb)
	}
}

// The same call through the Anthropic provider: the model's tool_use
// block becomes a call that asks, the owner allows it, the bot answers,
// and the result goes back as a tool_result block in the next request.
func TestAToolCallThroughAnthropic(t *testing.T) {
	t.Parallel()
	f, err := fakeanthropic.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	reg, err := provider.NewRegistry(provider.Config{DefaultProvider: "claude", Providers: map[string]provider.Profile{
		"claude": {Kind: "anthropic", BaseURL: f.URL, DefaultModel: "claude-test"},
	}}, func(string) string { return "k" })
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, Options{}, hub.Options{Providers: reg})
	bot := e.toolBot("weather", forecastTool)
	s := e.create("s")
	watcher := e.dial(true).HelloFromStart(s)
	f.Push(fakeanthropic.Reply{Chunks: []string{"Looking."}, ToolCalls: []fakeanthropic.ToolCall{{ID: "toolu_1", Name: "bot__weather__forecast", Input: `{"city":"Oslo"}`}}},
		fakeanthropic.Reply{Chunks: []string{"Snow."}})
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"weather?"}`, &r)
	a := e.waitApproval(watcher, "s", 1)[0]
	if a.Tool != "bot:weather/forecast" || string(a.Arguments) != `{"city":"Oslo"}` {
		t.Fatalf("approval %+v", a)
	}
	if code, _ := e.do("POST", "/v1/sessions/s/approvals/"+a.CallID, nil, `{"decision":"allow"}`, nil); code != 200 {
		t.Fatalf("allow: %d", code)
	}
	push := bot.Next(func(f wire.Frame) bool { return f.Op == wire.PushTool })
	bot.Send(wire.Command{ID: 3, Op: wire.OpToolResult, CallID: push.Tool.CallID, Output: "snow"})
	calls, end := e.turnEvents(watcher, "s", r.TurnID)
	if end.State != wire.TurnCompleted || calls[a.CallID][wire.EventToolCall].Text != "Looking." || calls[a.CallID][wire.EventToolResult].Text != "snow" {
		t.Fatalf("end %+v, calls %+v", end, calls)
	}
	second := f.Requests()[1]
	last := second.Messages[len(second.Messages)-1]
	if last.Role != "user" || len(last.Content) != 1 || last.Content[0].Type != "tool_result" || last.Content[0].ToolUseID != a.CallID ||
		!strings.Contains(string(last.Content[0].Content), "snow") {
		t.Fatalf("the model was sent %+v", last)
	}
	if u := end.TurnUsage(); u == nil || u.OutputTokens != 2 {
		t.Fatalf("usage of both responses: %+v", u)
	}

	// The next turn is sent the call as a tool_use block and its result
	// as a tool_result block, as the first was.
	f.Push(fakeanthropic.Reply{Chunks: []string{"Still snow."}})
	e.do("PUT", inputPath("s", 2), nil, `{"text":"and now?"}`, &r)
	if _, end := e.turnEvents(watcher, "s", r.TurnID); end.State != wire.TurnCompleted {
		t.Fatalf("turn 2: %+v", end)
	}
	next := f.Requests()[2]
	var shape []string
	for _, m := range next.Messages {
		for _, c := range m.Content {
			shape = append(shape, m.Role+":"+c.Type)
		}
	}
	if got := strings.Join(shape, " "); got != "user:text assistant:text assistant:tool_use user:tool_result assistant:text user:text" {
		t.Fatalf("turn 2 sent %s", got)
	}
	if use := next.Messages[1].Content[1]; use.ID != a.CallID || use.Name != "bot__weather__forecast" || string(use.Input) != `{"city":"Oslo"}` {
		t.Fatalf("the earlier call sent as %+v", use)
	}
}

// A session set to offer no tools offers its model none, lists none, and
// says so in a settings event; a fork keeps the setting; "all" offers
// them again; any other value is bad_request.
func TestASessionMayOfferNoTools(t *testing.T) {
	t.Parallel()
	e, f := toolEnv(t, provider.ToolsConfig{})
	e.toolBot("weather", forecastTool)
	s := e.create("s")
	patch := func(body string, want int) wire.Session {
		t.Helper()
		var cur wire.Session
		_, hdr := e.do("GET", "/v1/sessions/s", nil, "", &cur)
		var out wire.Session
		if code, _ := e.do("PATCH", "/v1/sessions/s", map[string]string{"If-Match": hdr.Get("ETag")}, body, &out); code != want {
			t.Fatalf("PATCH %s: %d, want %d", body, code, want)
		}
		return out
	}
	if s.Tools != wire.ToolsAll {
		t.Fatalf("a new session's tools: %q", s.Tools)
	}
	patch(`{"tools":"some"}`, 400)
	if got := patch(`{"tools":"none"}`, 200); got.Tools != wire.ToolsNone {
		t.Fatalf("patched: %+v", got)
	}
	var tools wire.Tools
	if e.do("GET", "/v1/tools?session=s", nil, "", &tools); len(tools.Tools) != 0 {
		t.Fatalf("tools of a session that offers none: %+v", tools)
	}
	evs := e.events("s")
	if last := evs[len(evs)-1]; last.Type != wire.EventSettings || last.Tools == nil || *last.Tools != wire.ToolsNone {
		t.Fatalf("settings event %+v", last)
	}
	watcher := e.dial(true).HelloFromStart(s)
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"hi"}`, &r)
	if _, end := e.turnEvents(watcher, "s", r.TurnID); end.State != wire.TurnCompleted {
		t.Fatalf("turn %+v", end)
	}
	if req := f.Requests()[0]; len(req.Tools) != 0 {
		t.Fatalf("offered %s", req.Tools)
	}
	fork, _ := e.forkOf("s", `{"at":0}`, 201)
	if fork.Tools != wire.ToolsNone {
		t.Fatalf("the fork's tools: %q", fork.Tools)
	}
	patch(`{"tools":"all"}`, 200)
	if e.do("GET", "/v1/tools?session=s", nil, "", &tools); len(tools.Tools) != 1 {
		t.Fatalf("tools again: %+v", tools)
	}
}
