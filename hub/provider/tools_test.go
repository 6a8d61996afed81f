package provider

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"albedo/hub/provider/fakeanthropic"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// A turn that goes on after its tools, as the turn runner sends it: the
// user's question, the model's calls (two in one response) and their
// results.
var toolTurn = []Message{
	{Role: wire.RoleUser, Author: "ann", Text: "weather?"},
	{Role: wire.RoleAssistant, Text: "Looking.", Calls: []ToolCall{
		{ID: "c1", Name: "bot_w_forecast", Arguments: `{"city":"Oslo"}`},
		{ID: "c2", Name: "bot_w_forecast", Arguments: `{"city":"Rome"}`},
	}},
	{Role: RoleTool, CallID: "c1", Text: "snow"},
	{Role: RoleTool, CallID: "c2", Text: "sun"},
}

var forecast = Tool{Name: "bot_w_forecast", Description: "The weather of a city.",
	Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

// The OpenAI provider offers the tools as functions, reads the calls the
// stream makes (two in parallel, their arguments in pieces) through the
// SDK, and sends calls and results back as tool_calls and tool messages.
func TestOpenAICallsTools(t *testing.T) {
	t.Parallel()
	f := fake(t)
	p := NewOpenAI("local", Profile{BaseURL: f.URL, DefaultModel: "m"}, "k")
	f.Push(fakeopenai.Reply{Chunks: []string{"Let me ", "look."}, ToolCalls: []fakeopenai.ToolCall{
		{ID: "call_1", Name: "bot_w_forecast", Arguments: `{"city":"Oslo, Norway"}`},
		{ID: "call_2", Name: "bot_w_forecast", Arguments: `{}`},
	}})
	var calls []ToolCall
	got, err := collect(t, p, context.Background(), Request{Messages: toolTurn[:1], Tools: []Tool{forecast},
		Call: func(c ToolCall) { calls = append(calls, c) }})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "") != "Let me look." {
		t.Fatalf("text %q", got)
	}
	want := []ToolCall{{ID: "call_1", Name: "bot_w_forecast", Arguments: `{"city":"Oslo, Norway"}`}, {ID: "call_2", Name: "bot_w_forecast", Arguments: `{}`}}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("calls %+v", calls)
	}
	var tool struct {
		Type     string `json:"type"`
		Function struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			Parameters  map[string]any `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(f.Requests()[0].Tools[0], &tool); err != nil || tool.Type != "function" || tool.Function.Name != "bot_w_forecast" ||
		tool.Function.Description != forecast.Description || tool.Function.Parameters["required"] == nil {
		t.Fatalf("tool offered: %s (%v)", f.Requests()[0].Tools[0], err)
	}

	if _, err := collect(t, p, context.Background(), Request{Messages: toolTurn, Tools: []Tool{forecast}}); err != nil {
		t.Fatal(err)
	}
	msgs := f.Requests()[1].Messages
	if len(msgs) != 4 {
		t.Fatalf("messages %s", msgs)
	}
	var a struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct{ Name, Arguments string }
		} `json:"tool_calls"`
	}
	if json.Unmarshal(msgs[1], &a) != nil || a.Role != "assistant" || a.Content != "Looking." || len(a.ToolCalls) != 2 ||
		a.ToolCalls[1].ID != "c2" || a.ToolCalls[1].Type != "function" || a.ToolCalls[1].Function.Arguments != `{"city":"Rome"}` {
		t.Fatalf("assistant message %s", msgs[1])
	}
	var r struct{ Role, Content, ToolCallID string }
	if json.Unmarshal(msgs[3], &r) != nil || !strings.Contains(string(msgs[3]), `"tool_call_id":"c2"`) || r.Role != "tool" || r.Content != "sun" {
		t.Fatalf("tool message %s", msgs[3])
	}
}

// The Anthropic provider offers the tools with their input schemas, reads
// tool_use blocks (input streamed as JSON pieces) through the SDK, and
// sends calls back as tool_use blocks and every result of a response in
// one user message of tool_result blocks. Thinking is left off when the
// turn goes on after its tools (the log keeps no signed thinking).
func TestAnthropicCallsTools(t *testing.T) {
	t.Parallel()
	f := fakeAnthropic(t)
	p := NewAnthropic("claude", Profile{BaseURL: f.URL, DefaultModel: "claude-test"}, "k")
	f.Push(fakeanthropic.Reply{Chunks: []string{"Let me look."}, ToolCalls: []fakeanthropic.ToolCall{
		{ID: "toolu_1", Name: "bot_w_forecast", Input: `{"city":"Oslo"}`},
		{ID: "toolu_2", Name: "bot_w_forecast"},
	}})
	var calls []ToolCall
	got, err := collect(t, p, context.Background(), Request{Messages: toolTurn[:1], Tools: []Tool{forecast}, Effort: "high",
		Call: func(c ToolCall) { calls = append(calls, c) }})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "") != "Let me look." {
		t.Fatalf("text %q", got)
	}
	want := []ToolCall{{ID: "toolu_1", Name: "bot_w_forecast", Arguments: `{"city":"Oslo"}`}, {ID: "toolu_2", Name: "bot_w_forecast", Arguments: `{}`}}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("calls %+v", calls)
	}
	var tool struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"input_schema"`
	}
	req := f.Requests()[0]
	if json.Unmarshal(req.Tools[0], &tool) != nil || tool.Name != "bot_w_forecast" || tool.InputSchema["type"] != "object" ||
		tool.InputSchema["properties"] == nil || tool.InputSchema["required"] == nil || req.Thinking == nil {
		t.Fatalf("tool offered: %s; thinking %+v", req.Tools[0], req.Thinking)
	}

	if _, err := collect(t, p, context.Background(), Request{Messages: toolTurn, Tools: []Tool{forecast}, Effort: "high"}); err != nil {
		t.Fatal(err)
	}
	req = f.Requests()[1]
	if len(req.Messages) != 3 || req.Thinking != nil {
		t.Fatalf("messages %+v; thinking %+v", req.Messages, req.Thinking)
	}
	a := req.Messages[1]
	if a.Role != "assistant" || len(a.Content) != 3 || a.Content[0].Text != "Looking." || a.Content[2].Type != "tool_use" ||
		a.Content[2].ID != "c2" || string(a.Content[2].Input) != `{"city":"Rome"}` {
		t.Fatalf("assistant message %+v", a)
	}
	u := req.Messages[2]
	if u.Role != "user" || len(u.Content) != 2 || u.Content[0].Type != "tool_result" || u.Content[1].ToolUseID != "c2" ||
		!strings.Contains(string(u.Content[1].Content), "sun") {
		t.Fatalf("results message %+v", u)
	}
}
