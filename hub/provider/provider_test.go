package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func collect(t *testing.T, p Provider, ctx context.Context, req Request) ([]string, error) {
	t.Helper()
	var got []string
	err := p.Stream(ctx, req, func(s string) { got = append(got, s) })
	return got, err
}

func TestEchoStreamsInChunks(t *testing.T) {
	t.Parallel()
	got, err := collect(t, Echo{}, context.Background(), Request{Messages: []Message{
		{Role: "user", Text: "first"}, {Role: "assistant", Text: "x"}, {Role: "user", Text: "hello there world"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 3 || strings.Join(got, "") != "echo: hello there world" {
		t.Fatalf("chunks %q", got)
	}
}

func fake(t *testing.T) *fakeopenai.Server {
	t.Helper()
	f, err := fakeopenai.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestOpenAIStreamsAndSendsModelAndEffort(t *testing.T) {
	t.Parallel()
	f := fake(t)
	p := NewOpenAI("local", Profile{BaseURL: f.URL, DefaultModel: "base-model"}, "k")
	got, err := collect(t, p, context.Background(), Request{
		Messages: []Message{{Role: "user", Text: "ping pong"}}, Model: "m1", Effort: "high",
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "") != "fake: ping pong" || len(got) < 2 {
		t.Fatalf("chunks %q", got)
	}
	_, err = collect(t, p, context.Background(), Request{Messages: []Message{{Role: "user", Text: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if reqs[0].Model != "m1" || reqs[0].ReasoningEffort == nil || *reqs[0].ReasoningEffort != "high" || !reqs[0].Stream {
		t.Fatalf("first request %+v", reqs[0].Raw)
	}
	if _, sent := reqs[1].Raw["reasoning_effort"]; sent || reqs[1].Model != "base-model" {
		t.Fatalf("second request (no effort, default model) %+v", reqs[1].Raw)
	}
}

func TestOpenAIFailuresAreReadable(t *testing.T) {
	t.Parallel()
	f := fake(t)
	// Only the silent case waits for the idle timeout: the others answer
	// at once, and a loaded machine may take longer than 300 ms to say so.
	p := NewOpenAI("local", Profile{BaseURL: f.URL, DefaultModel: "m", IdleTimeout: Duration{30 * time.Second}}, "")
	quick := NewOpenAI("local", Profile{BaseURL: f.URL, DefaultModel: "m", IdleTimeout: Duration{300 * time.Millisecond}}, "")
	cases := []struct {
		name  string
		reply fakeopenai.Reply
		want  []string
	}{
		{"401", fakeopenai.Reply{Status: 401, Message: "bad key"}, []string{"HTTP 401", "bad key", "api_key_env"}},
		{"500", fakeopenai.Reply{Status: 500, Message: "boom"}, []string{"HTTP 500", "boom", "try again"}},
		{"404", fakeopenai.Reply{Status: 404, Message: "no such model"}, []string{"HTTP 404", "model"}},
		{"broken stream", fakeopenai.Reply{Chunks: []string{"part"}, Break: true}, []string{"stream broke"}},
		{"silence", fakeopenai.Reply{Silent: true}, []string{"sent nothing for 300ms"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := p
			if tc.reply.Silent {
				p = quick
			}
			f.Push(tc.reply)
			_, err := collect(t, p, context.Background(), Request{Messages: []Message{{Role: "user", Text: "x"}}})
			if err == nil {
				t.Fatalf("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestOpenAIHonoursCancel(t *testing.T) {
	t.Parallel()
	f := fake(t)
	p := NewOpenAI("local", Profile{BaseURL: f.URL, DefaultModel: "m"}, "")
	block := make(chan struct{})
	defer close(block)
	f.Push(fakeopenai.Reply{Chunks: []string{"so far"}, Block: block})
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 10)
	done := make(chan error, 1)
	go func() {
		done <- p.Stream(ctx, Request{Messages: []Message{{Role: "user", Text: "x"}}}, func(s string) { got <- s })
	}()
	if s := <-got; s != "so far" {
		t.Fatalf("first chunk %q", s)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Stream did not return after cancel")
	}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	r, err := NewRegistry(Config{Providers: map[string]Profile{"local": {Kind: "openai", BaseURL: "http://x/v1"}}}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if r.Default() != NameEcho {
		t.Fatalf("default %q", r.Default())
	}
	for _, ok := range []string{"", "echo", "local"} {
		if err := r.Check(ok); err != nil {
			t.Fatalf("%q: %v", ok, err)
		}
	}
	if err := r.Check("nope"); err == nil || !strings.Contains(err.Error(), "known: echo, local") {
		t.Fatalf("unknown provider error %v", err)
	}
	if _, err := NewRegistry(Config{DefaultProvider: "ghost"}, nil); err == nil {
		t.Fatalf("a default that does not exist was accepted")
	}
	// context_tokens is left out (the model's own window) or a window that
	// holds a few messages: a typo is refused when the file is read, not
	// found by every turn as a budget below zero.
	for _, n := range []int{-1, 1, MinContextTokens - 1} {
		_, err := NewRegistry(Config{Providers: map[string]Profile{"local": {Kind: "openai", BaseURL: "http://x/v1", ContextTokens: n}}}, nil)
		if err == nil || !strings.Contains(err.Error(), "context_tokens") || !strings.Contains(err.Error(), fmt.Sprint(MinContextTokens)) {
			t.Fatalf("context_tokens %d: %v", n, err)
		}
	}
	for _, n := range []int{0, MinContextTokens} {
		if _, err := NewRegistry(Config{Providers: map[string]Profile{"local": {Kind: "anthropic", ContextTokens: n}}}, func(string) string { return "" }); err != nil {
			t.Fatalf("context_tokens %d: %v", n, err)
		}
	}
}

// List names echo and each profile with its kind and default model, the
// default first in its own field, and nothing of URLs or keys.
func TestRegistryList(t *testing.T) {
	t.Parallel()
	r, err := NewRegistry(Config{DefaultProvider: "local", Providers: map[string]Profile{
		"local":  {BaseURL: "http://secret.example/v1", APIKeyEnv: "KEY", DefaultModel: "m1"},
		"remote": {Kind: "openai", BaseURL: "http://x/v1"},
		"claude": {Kind: "anthropic", APIKeyEnv: "KEY", DefaultModel: "claude-sonnet-4-5"},
	}}, func(string) string { return "sk-secret" })
	if err != nil {
		t.Fatal(err)
	}
	got := r.List()
	want := wire.Providers{Default: "local", Providers: []wire.ProviderInfo{
		{Name: "echo", Kind: "echo"}, {Name: "claude", Kind: "anthropic", Model: "claude-sonnet-4-5"}, {Name: "local", Kind: "openai", Model: "m1"}, {Name: "remote", Kind: "openai"},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("List = %+v, want %+v", got, want)
	}
	if b, _ := json.Marshal(got); strings.Contains(string(b), "secret") {
		t.Fatalf("List leaks: %s", b)
	}
}

// Each user message carries its author as the OpenAI format's name, made to
// fit the format's rule, so that a model can tell the people apart.
func TestOpenAISendsAuthorsAsNames(t *testing.T) {
	t.Parallel()
	f := fake(t)
	p := NewOpenAI("local", Profile{BaseURL: f.URL, DefaultModel: "m"}, "k")
	_, err := collect(t, p, context.Background(), Request{Messages: []Message{
		{Role: "user", Author: "ann", Text: "hi"},
		{Role: "assistant", Author: "m", Text: "hello"},
		{Role: "user", Author: "bob.lee", Text: "and me"},
		{Role: "user", Text: "nobody"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, raw := range f.Requests()[0].Messages {
		var m struct{ Role, Name string }
		_ = json.Unmarshal(raw, &m)
		names = append(names, m.Role+":"+m.Name)
	}
	if got := strings.Join(names, " "); got != "user:ann assistant: user:bob_lee user:" {
		t.Fatalf("roles and names sent: %s", got)
	}
}
