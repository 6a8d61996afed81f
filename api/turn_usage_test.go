package api

import (
	"testing"

	"albedo/hub"
	"albedo/hub/provider"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// A turn's closing event carries its usage: what an OpenAI-compatible
// provider reported, or null from echo, which reports none.
func TestTurnsCarryTheirUsage(t *testing.T) {
	t.Parallel()
	f, err := fakeopenai.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	reg, err := provider.NewRegistry(provider.Config{Providers: map[string]provider.Profile{
		"fake": {Kind: "openai", BaseURL: f.URL, DefaultModel: "m"},
	}}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, Options{}, hub.Options{Providers: reg})
	e.create("echoed")
	e.createWith("counted", `{"provider":"fake"}`)
	f.Push(fakeopenai.Reply{Chunks: []string{"a ", "b"}, Usage: &fakeopenai.Usage{PromptTokens: 11, CompletionTokens: 2}})
	e.say("echoed", "hello")
	e.say("counted", "hello")
	for id, want := range map[string]string{"echoed": "null", "counted": `{"input_tokens":11,"output_tokens":2,"cached_tokens":0,"reasoning_tokens":0}`} {
		evs := e.settle(id, 1)
		end := evs[len(evs)-1]
		if end.Type != wire.EventTurn || string(end.Usage) != want {
			t.Errorf("%s's closing event: %+v, usage %s; want %s", id, end, end.Usage, want)
		}
	}
}
