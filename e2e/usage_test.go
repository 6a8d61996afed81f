//go:build !e2e_only || e2e_core

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"albedo/hub/provider/fakeanthropic"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// The fake OpenAI and Anthropic servers report usage; the turns' closing
// events, GET /v1/usage, albedo usage and each session's own totals agree
// to the token and the cent.
func TestUsageAgreesEverywhere(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	ant, err := fakeanthropic.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ant.Close() })
	oai := withFakeAnd(t, home, fmt.Sprintf("[providers.fake.prices]\ninput = 2\noutput = 8\n\n[providers.claude]\nkind = \"anthropic\"\nbase_url = %q\ndefault_model = \"claude-test\"\n[providers.claude.prices]\ninput = 3\noutput = 15\ncached_input = 0.3\n", ant.URL))
	startDaemon(t, home)
	c := newClient(t, home)
	ctx := ctxT(t)
	oai.Push(fakeopenai.Reply{Chunks: []string{"one"}, Usage: &fakeopenai.Usage{PromptTokens: 1200, CompletionTokens: 300, CachedTokens: 200}},
		fakeopenai.Reply{Chunks: []string{"two"}, Usage: &fakeopenai.Usage{PromptTokens: 1500, CompletionTokens: 100}})
	ant.Push(fakeanthropic.Reply{Chunks: []string{"three"}, Usage: &fakeanthropic.Usage{InputTokens: 700, CacheReadInputTokens: 300, OutputTokens: 90}})
	for id, p := range map[string]string{"o": "fake", "a": "claude"} {
		if _, err := c.CreateSession(ctx, id, wire.SessionCreate{Title: id, Provider: p}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"o", "o", "a"} {
		if _, err := c.PutInput(ctx, id, uuid.NewString(), "hello"); err != nil {
			t.Fatal(err)
		}
	}
	waitTurnsClosed(t, ctx, c, "o", 2)
	waitTurnsClosed(t, ctx, c, "a", 1)
	// What the closing events say, summed by session.
	sum := map[string]*wire.UsageTotal{}
	for _, id := range []string{"o", "a"} {
		s := &wire.UsageTotal{Key: id}
		sum[id] = s
		for _, ev := range events(t, ctx, c, id) {
			if ev.Type != wire.EventTurn || ev.State == wire.TurnStarted {
				continue
			}
			var u wire.Usage
			if err := json.Unmarshal(ev.Usage, &u); err != nil || u.Cost == nil {
				t.Fatalf("%s's closing event: %s (%v)", id, ev.Usage, err)
			}
			s.Turns++
			s.InputTokens += u.InputTokens
			s.OutputTokens += u.OutputTokens
			if u.CachedTokens != nil {
				s.CachedTokens += *u.CachedTokens
			}
			cost := *u.Cost
			if s.Cost != nil {
				cost += *s.Cost
			}
			s.Cost = &cost
		}
	}
	same := func(where string, got, want wire.UsageTotal) {
		t.Helper()
		if got.Turns != want.Turns || got.InputTokens != want.InputTokens || got.OutputTokens != want.OutputTokens ||
			got.CachedTokens != want.CachedTokens || got.Cost == nil || fmt.Sprintf("%.9f", *got.Cost) != fmt.Sprintf("%.9f", *want.Cost) {
			t.Fatalf("%s: %+v (cost %v), the events say %+v (cost %v)", where, got, *got.Cost, want, *want.Cost)
		}
	}
	report, err := c.Usage(ctx, "session", "")
	if err != nil || len(report.Totals) != 2 {
		t.Fatalf("GET /v1/usage: %+v %v", report, err)
	}
	var cliTotals []wire.UsageTotal
	if err := json.Unmarshal([]byte(cli(t, home, "usage", "--by", "session", "--json")), &cliTotals); err != nil || len(cliTotals) != 2 {
		t.Fatalf("albedo usage --json: %+v %v", cliTotals, err)
	}
	for i := range 2 {
		same("GET /v1/usage "+report.Totals[i].Key, report.Totals[i], *sum[report.Totals[i].Key])
		same("albedo usage "+cliTotals[i].Key, cliTotals[i], *sum[cliTotals[i].Key])
	}
	// The table names what the ids are: sessions by title, people by
	// name, in headers of one case.
	byMember := cli(t, home, "usage", "--by", "member")
	if !strings.Contains(byMember, "MEMBER  ") || !strings.Contains(byMember, "\nroot ") && !strings.Contains(byMember, " root ") {
		t.Fatalf("albedo usage --by member:\n%s", byMember)
	}
	ms, err := c.Members(ctx)
	if err != nil || len(ms) == 0 {
		t.Fatalf("members: %+v %v", ms, err)
	}
	for _, m := range ms {
		if strings.Contains(byMember, m.ID) {
			t.Fatalf("albedo usage --by member prints the id %s:\n%s", m.ID, byMember)
		}
	}
	for id, want := range sum {
		s, err := c.Session(ctx, id)
		if err != nil || s.Usage == nil {
			t.Fatalf("GET session %s: %+v %v", id, s, err)
		}
		same("session "+id, *s.Usage, *want)
	}
	// Anthropic's input tokens are those not read from its cache: 700 at
	// the input price, 300 at the cached price, 90 out.
	if want := (700.0*3 + 300*0.3 + 90*15) / 1e6; fmt.Sprintf("%.9f", *sum["a"].Cost) != fmt.Sprintf("%.9f", want) {
		t.Fatalf("the Anthropic turn cost %v, want %v", *sum["a"].Cost, want)
	}
}
