package provider

import (
	"context"
	"strings"
	"testing"

	"albedo/hub/provider/fakeanthropic"
	"albedo/wire"
)

func fakeAnthropic(t *testing.T) *fakeanthropic.Server {
	t.Helper()
	f, err := fakeanthropic.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// The Anthropic provider streams the text of Anthropic's events (never
// the thinking), sends the system messages as the system prompt and who
// wrote each input, maps effort to a thinking budget, and reports the
// usage of message_start and message_delta.
func TestAnthropicStreamsThinksAndCounts(t *testing.T) {
	t.Parallel()
	f := fakeAnthropic(t)
	p := NewAnthropic("claude", Profile{BaseURL: f.URL, DefaultModel: "claude-test"}, "k-1")
	f.Push(fakeanthropic.Reply{Chunks: []string{"Bon", "jour"}, Thinking: "let me think",
		Usage: &fakeanthropic.Usage{InputTokens: 10, CacheReadInputTokens: 90, OutputTokens: 40, ThinkingTokens: 30}})
	var u *wire.Usage
	got, err := collect(t, p, context.Background(), Request{Effort: "medium", Usage: func(r wire.Usage) { u = &r },
		Messages: []Message{{Role: wire.RoleSystem, Text: "Answer in French."}, {Role: wire.RoleUser, Author: "ann", Text: "hello"}}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "") != "Bonjour" {
		t.Fatalf("streamed %q", got)
	}
	req := f.Requests()[0]
	if req.Model != "claude-test" || !req.Stream || req.Key != "k-1" || len(req.System) != 1 || !strings.Contains(string(req.System[0]), "Answer in French.") {
		t.Fatalf("request %+v", req)
	}
	if len(req.Messages) != 1 || req.Messages[0].Content[0].Text != "ann: hello" {
		t.Fatalf("messages %+v", req.Messages)
	}
	if req.Thinking == nil || req.Thinking.Type != "enabled" || req.Thinking.BudgetTokens != 4096 || req.MaxTokens != 4096+maxReplyTokens {
		t.Fatalf("thinking %+v, max_tokens %d", req.Thinking, req.MaxTokens)
	}
	if u == nil || u.InputTokens != 100 || *u.CachedTokens != 90 || u.OutputTokens != 40 || u.ReasoningTokens == nil || *u.ReasoningTokens != 30 {
		t.Fatalf("usage %+v", u)
	}

	// No effort: no thinking. An error of the API is said for people.
	f.Push(fakeanthropic.Reply{}, fakeanthropic.Reply{Status: 401, Message: "invalid x-api-key"})
	if _, err := collect(t, p, context.Background(), Request{Messages: []Message{{Role: wire.RoleUser, Text: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if r := f.Requests()[1]; r.Thinking != nil || r.MaxTokens != maxReplyTokens {
		t.Fatalf("without effort: thinking %+v, max_tokens %d", r.Thinking, r.MaxTokens)
	}
	_, err = collect(t, p, context.Background(), Request{Messages: []Message{{Role: wire.RoleUser, Text: "x"}}})
	if err == nil || !strings.Contains(err.Error(), `provider "claude" answered HTTP 401: invalid x-api-key; check the key in api_key_env`) {
		t.Fatalf("a refused key: %v", err)
	}
}

// An interrupt (the turn's context cancelled) ends the stream at once, as
// ctx's error, with what came before it emitted.
func TestAnthropicHonoursCancel(t *testing.T) {
	t.Parallel()
	f := fakeAnthropic(t)
	p := NewAnthropic("claude", Profile{BaseURL: f.URL, DefaultModel: "m"}, "")
	block := make(chan struct{})
	defer close(block)
	f.Push(fakeanthropic.Reply{Chunks: []string{"partial "}, Block: block})
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan struct{}, 1) // the first piece is kept: the test may not be waiting yet
	done := make(chan error, 1)
	go func() {
		done <- p.Stream(ctx, Request{Messages: []Message{{Role: wire.RoleUser, Text: "x"}}}, func(string) {
			select {
			case first <- struct{}{}:
			default:
			}
		})
	}()
	<-first
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("after cancel: %v", err)
	}
}

// An Anthropic profile has a context window, as an OpenAI one does: its
// context_tokens, else its model family's, so that its sessions are
// compacted; and its summary_provider.
func TestAnthropicHasAWindow(t *testing.T) {
	t.Parallel()
	var p Provider = NewAnthropic("claude", Profile{Kind: "anthropic", DefaultModel: "claude-sonnet-4-5", SummaryProvider: "cheap"}, "")
	w, ok := p.(Windowed)
	if !ok {
		t.Fatal("an Anthropic profile is not Windowed: its sessions would never be compacted")
	}
	if got := w.Context(Request{}); got != DefaultContext("claude-sonnet-4-5") {
		t.Fatalf("the default model's window: %d", got)
	}
	if got := w.Context(Request{Model: "gpt-4"}); got != DefaultContext("gpt-4") {
		t.Fatalf("a session's model's window: %d", got)
	}
	if w.Summarizer() != "cheap" {
		t.Fatalf("summarizer %q", w.Summarizer())
	}
	set := NewAnthropic("claude", Profile{Kind: "anthropic", ContextTokens: 5000}, "").Context(Request{Model: "claude-x"})
	if set != 5000 {
		t.Fatalf("context_tokens 5000: window %d", set)
	}
}
