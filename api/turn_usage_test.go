package api

import (
	"testing"

	"albedo/hub/provider"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// A turn's closing event carries its usage: what an OpenAI-compatible
// provider reported, or null from echo, which reports none.
func TestTurnsCarryTheirUsage(t *testing.T) {
	t.Parallel()
	e, f := newFakeEnvAs(t, "fake", func(p *provider.Profile) { p.Prices = &provider.Prices{Input: 1, Output: 2} })
	e.create("echoed")
	e.createWith("counted", `{"provider":"fake"}`)
	f.Push(fakeopenai.Reply{Chunks: []string{"a ", "b"}, Usage: &fakeopenai.Usage{PromptTokens: 11, CompletionTokens: 2}})
	e.say("echoed", "hello")
	e.say("counted", "hello")
	for id, want := range map[string]string{"echoed": "null", "counted": `{"input_tokens":11,"output_tokens":2,"cached_tokens":0,"reasoning_tokens":0,"cost":0.000015}`} {
		evs := e.settle(id, 1)
		end := evs[len(evs)-1]
		if end.Type != wire.EventTurn || string(end.Usage) != want {
			t.Errorf("%s's closing event: %+v, usage %s; want %s", id, end, end.Usage, want)
		}
	}
}

// GET /v1/usage sums what the turns cost, by provider, member, session or
// day, since a time; a turn that reported nothing is counted as such,
// never as zero tokens. Admins only; bad groupings and times are
// bad_request.
func TestUsageReport(t *testing.T) {
	t.Parallel()
	e, f := newFakeEnvAs(t, "fake", func(p *provider.Profile) { p.Prices = &provider.Prices{Input: 1, Output: 2} })
	e.create("echoed")
	e.createWith("counted", `{"provider":"fake"}`)
	for range 2 {
		f.Push(fakeopenai.Reply{Chunks: []string{"ok"}, Usage: &fakeopenai.Usage{PromptTokens: 1000, CompletionTokens: 500}})
	}
	e.say("echoed", "hello")
	e.say("counted", "one")
	e.settle("counted", 1)
	e.say("counted", "two")
	e.settle("counted", 2)
	e.settle("echoed", 1)
	var r wire.UsageReport
	if code, _ := e.do("GET", "/v1/usage?by=provider&since=2020-01-01", nil, "", &r); code != 200 || r.By != "provider" || len(r.Totals) != 2 {
		t.Fatalf("by provider: %d %+v", code, r)
	}
	fake, echo := r.Totals[0], r.Totals[1]
	if fake.Key != "fake" || fake.Turns != 2 || fake.InputTokens != 2000 || fake.OutputTokens != 1000 || fake.Cost == nil || *fake.Cost != 0.004 || fake.Unreported != 0 {
		t.Fatalf("fake's total: %+v", fake)
	}
	if echo.Key != "echo" || echo.Turns != 1 || echo.Unreported != 1 || echo.InputTokens != 0 || echo.Cost != nil {
		t.Fatalf("echo's total: %+v", echo)
	}
	// The session's own totals, which the terminal's and the page's
	// meters start from, agree; so does its context window. The model its
	// turns go to is the profile's default, named (none for echo).
	var s wire.Session
	if code, _ := e.do("GET", "/v1/sessions/counted", nil, "", &s); code != 200 || s.Usage == nil || s.Usage.Turns != 2 ||
		s.Usage.InputTokens != fake.InputTokens || s.Usage.OutputTokens != fake.OutputTokens || s.Usage.Cost == nil || *s.Usage.Cost != *fake.Cost ||
		s.ContextTokens != provider.UnknownContext || s.Model != "" || s.ResolvedModel != "fake-model" {
		t.Fatalf("GET counted: %d %+v, usage %+v", code, s, s.Usage)
	}
	s = wire.Session{}
	if code, _ := e.do("GET", "/v1/sessions/echoed", nil, "", &s); code != 200 || s.Usage.Unreported != 1 || s.Usage.Cost != nil || s.ContextTokens != 0 || s.ResolvedModel != "" {
		t.Fatalf("GET echoed: %d %+v, usage %+v", code, s, s.Usage)
	}
	if code, _ := e.do("GET", "/v1/usage?by=day", nil, "", &r); code != 200 || len(r.Totals) != 1 || r.Totals[0].Turns != 3 {
		t.Fatalf("by day: %d %+v", code, r)
	}
	if code, _ := e.do("GET", "/v1/usage?since=2999-01-01", nil, "", &r); code != 200 || r.By != "session" || len(r.Totals) != 0 {
		t.Fatalf("since the future: %d %+v", code, r)
	}
	ann := e.member("ann", false)
	for _, c := range []struct {
		path string
		hdr  map[string]string
		want int
	}{
		{"/v1/usage?by=colour", nil, 400},
		{"/v1/usage?since=yesterday", nil, 400},
		{"/v1/usage", e.as(ann.Token), 403},
	} {
		if code, _ := e.do("GET", c.path, c.hdr, "", nil); code != c.want {
			t.Errorf("GET %s: %d, want %d", c.path, code, c.want)
		}
	}
}
