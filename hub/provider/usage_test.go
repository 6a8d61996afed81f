package provider

import (
	"context"
	"testing"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// An OpenAI-compatible stream is asked for its usage
// (stream_options.include_usage) and the report of its last chunk, read
// by the official SDK, is the turn's: the cached and reasoning tokens as
// reported; a server that reports nothing leaves the turn with none.
func TestOpenAIReportsUsage(t *testing.T) {
	t.Parallel()
	f := fake(t)
	p := NewOpenAI("local", Profile{BaseURL: f.URL, DefaultModel: "m"}, "")
	f.Push(fakeopenai.Reply{Usage: &fakeopenai.Usage{PromptTokens: 120, CompletionTokens: 7, CachedTokens: 100, ReasoningTokens: 3}},
		fakeopenai.Reply{NoUsage: true})
	var got []*wire.Usage
	for range 2 {
		var u *wire.Usage
		req := Request{Messages: []Message{{Role: wire.RoleUser, Text: "count me"}}, Usage: func(r wire.Usage) { u = &r }}
		if _, err := collect(t, p, context.Background(), req); err != nil {
			t.Fatal(err)
		}
		got = append(got, u)
	}
	if reqs := f.Requests(); reqs[0].StreamOptions == nil || !reqs[0].StreamOptions.IncludeUsage {
		t.Fatalf("the request did not ask for usage: %+v", reqs[0].Raw)
	}
	u := got[0]
	if u == nil || u.InputTokens != 120 || u.OutputTokens != 7 || u.CachedTokens == nil || *u.CachedTokens != 100 || u.ReasoningTokens == nil || *u.ReasoningTokens != 3 {
		t.Fatalf("usage %+v", u)
	}
	if got[1] != nil {
		t.Fatalf("a server that reported nothing gave %+v", got[1])
	}
}

// A closing turn event says its usage, or null when none was reported:
// never zeros, and never absent.
func TestTurnUsageIsNullOrAnObject(t *testing.T) {
	t.Parallel()
	var ev wire.Event
	ev.SetUsage(nil)
	if b := string(wire.Encode(ev)); b != `{"offset":0,"type":"","at":"0001-01-01T00:00:00Z","usage":null}` || ev.TurnUsage() != nil {
		t.Fatalf("no usage: %s", b)
	}
	in := int64(5)
	ev.SetUsage(&wire.Usage{InputTokens: 9, OutputTokens: 2, CachedTokens: &in})
	if u := ev.TurnUsage(); u == nil || u.InputTokens != 9 || *u.CachedTokens != 5 || u.ReasoningTokens != nil {
		t.Fatalf("usage back: %+v", u)
	}
	var other wire.Event
	if b := string(wire.Encode(other)); b != `{"offset":0,"type":"","at":"0001-01-01T00:00:00Z"}` {
		t.Fatalf("an event that is no turn's end: %s", b)
	}
}
