package api

import (
	"encoding/json"
	"strings"
	"testing"

	"albedo/hub"
	"albedo/hub/provider"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// sentMessage is one message of a request to the fake, as OpenAI's API
// takes it.
type sentMessage struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

func sentMessages(t *testing.T, r fakeopenai.Request) []sentMessage {
	t.Helper()
	out := make([]sentMessage, len(r.Messages))
	for i, raw := range r.Messages {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			t.Fatalf("message %s: %v", raw, err)
		}
	}
	return out
}

func roles(ms []sentMessage) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Role)
	}
	return strings.Join(out, " ")
}

// A later turn is told what earlier turns' tools did: the call, as the
// assistant message that made it, and its result under its id, as the
// API took them when they were made; with no tools offered any more,
// they are told as text (an API refuses calls of tools it was not
// given); and a compaction's summary covers them. Search finds them.
func TestALaterTurnIsToldOfEarlierCalls(t *testing.T) {
	t.Parallel()
	f, err := fakeopenai.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	reg, err := provider.NewRegistry(provider.Config{DefaultProvider: "local",
		Tools: provider.ToolsConfig{Rules: []provider.ToolRule{{Match: "bot:weather/*", Policy: "allow"}}},
		Providers: map[string]provider.Profile{
			"local": {BaseURL: f.URL, DefaultModel: "m", ContextTokens: 2000},
		}}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, Options{}, hub.Options{Providers: reg})
	bot := e.toolBot("weather", forecastTool)
	s := e.create("s")
	watcher := e.dial(true).HelloFromStart(s)
	turn := func(n int, text string) {
		t.Helper()
		var r wire.Receipt
		e.do("PUT", inputPath("s", n), nil, `{"text":`+jsonString(text)+`}`, &r)
		if _, end := e.turnEvents(watcher, "s", r.TurnID); end.State != wire.TurnCompleted {
			t.Fatalf("turn %d: %+v", n, end)
		}
	}

	f.Push(fakeopenai.Reply{Chunks: []string{"Let me look."}, ToolCalls: []fakeopenai.ToolCall{{ID: "call_x", Name: "bot__weather__forecast", Arguments: `{"city":"Oslo"}`}}},
		fakeopenai.Reply{Chunks: []string{"Snow in Oslo."}})
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"weather?"}`, &r)
	push := bot.Next(func(f wire.Frame) bool { return f.Op == wire.PushTool })
	bot.Send(wire.Command{ID: 3, Op: wire.OpToolResult, CallID: push.Tool.CallID, Output: "snow, -4 °C"})
	if _, end := e.turnEvents(watcher, "s", r.TurnID); end.State != wire.TurnCompleted {
		t.Fatalf("turn 1: %+v", end)
	}
	call := push.Tool.CallID

	// Search finds what the model said before its call and the tool's
	// output, as it finds messages.
	var found wire.SearchResults
	if code, _ := e.do("GET", "/v1/search?q=snow", nil, "", &found); code != 200 || len(found.Results) != 2 ||
		found.Results[0].Type != wire.EventMessage || found.Results[1].Type != wire.EventToolResult ||
		found.Results[1].Text != "«snow», -4 °C" {
		t.Fatalf("search snow: %d %+v", code, found)
	}
	if code, _ := e.do("GET", "/v1/search?q=look&session=s", nil, "", &found); code != 200 || len(found.Results) != 1 ||
		found.Results[0].Type != wire.EventToolCall || found.Results[0].Author != "m" {
		t.Fatalf("search look: %d %+v", code, found)
	}

	f.Push(fakeopenai.Reply{Chunks: []string{"Sun tomorrow."}})
	turn(2, "and tomorrow?")
	ms := sentMessages(t, f.Requests()[2])
	if got := roles(ms); got != "user assistant tool assistant user" {
		t.Fatalf("turn 2 sent %s: %+v", got, ms)
	}
	if c := ms[1]; c.Content != "Let me look." || len(c.ToolCalls) != 1 || c.ToolCalls[0].ID != call ||
		c.ToolCalls[0].Function.Name != "bot__weather__forecast" || c.ToolCalls[0].Function.Arguments != `{"city":"Oslo"}` {
		t.Fatalf("the earlier call sent as %+v", c)
	}
	if res := ms[2]; res.ToolCallID != call || res.Content != "snow, -4 °C" {
		t.Fatalf("the earlier result sent as %+v", res)
	}
	if ms[3].Content != "Snow in Oslo." || ms[4].Content != "and tomorrow?" {
		t.Fatalf("turn 2 sent %+v", ms)
	}

	var cur wire.Session
	_, hdr := e.do("GET", "/v1/sessions/s", nil, "", &cur)
	if code, _ := e.do("PATCH", "/v1/sessions/s", map[string]string{"If-Match": hdr.Get("ETag")}, `{"tools":"none"}`, &cur); code != 200 {
		t.Fatalf("PATCH tools: %d", code)
	}
	f.Push(fakeopenai.Reply{Chunks: []string{"Fine."}})
	turn(3, "thanks")
	third := f.Requests()[3]
	ms = sentMessages(t, third)
	if len(third.Tools) != 0 || roles(ms) != "user assistant user assistant user assistant user" {
		t.Fatalf("turn 3 sent %s, tools %s", roles(ms), third.Tools)
	}
	if len(ms[1].ToolCalls) != 0 || ms[1].Content != "Let me look.\n[called bot__weather__forecast with {\"city\":\"Oslo\"}]" ||
		ms[2].Content != "[the result of bot__weather__forecast]\nsnow, -4 °C" {
		t.Fatalf("calls as text: %q, %q", ms[1].Content, ms[2].Content)
	}

	// A long message, so that what came before it is compacted; the
	// summarizer reads the call and its result.
	f.Push(fakeopenai.Reply{Chunks: []string{"Noted."}})
	turn(4, strings.Repeat("a long note ", 200))
	var compaction wire.Event
	if code, _ := e.do("POST", "/v1/sessions/s/compact", nil, "", &compaction); code != 201 {
		t.Fatalf("compact: %d", code)
	}
	reqs := f.Requests()
	summary := reqs[len(reqs)-1]
	if !isSummary(summary) {
		t.Fatalf("the last request is no summary's: %s", summary.Messages[0])
	}
	texts, _ := contents(summary)
	all := strings.Join(texts, "\n")
	if !strings.Contains(all, `[called bot:weather/forecast with {"city":"Oslo"}]`) || !strings.Contains(all, "[a tool's result]\nsnow, -4 °C") {
		t.Fatalf("the summary's request: %q", texts)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
