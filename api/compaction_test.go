package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"albedo/hub/provider"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// isSummary says whether a request to the fake asked for a summary.
func isSummary(r fakeopenai.Request) bool {
	var m struct{ Role, Content string }
	json.Unmarshal(r.Messages[0], &m)
	return m.Role == "system" && strings.Contains(m.Content, "You compact a conversation")
}

// contents are a request's messages' texts, and their estimated tokens.
func contents(r fakeopenai.Request) ([]string, int) {
	var out []string
	tokens := 0
	for _, raw := range r.Messages {
		var m struct{ Role, Content string }
		json.Unmarshal(raw, &m)
		out = append(out, m.Content)
		tokens += provider.Tokens(m.Content) + provider.MessageOverhead
	}
	return out, tokens
}

// With a context window of 400 tokens, a session of eight long exchanges
// is compacted as it goes: no request the provider gets passes the
// budget (three quarters of the window), each compaction covers messages
// the turns after it no longer get, which get its summary and exactly
// the messages after what it covers; and a fork from before the first
// compaction sends the provider the original messages.
func TestCompactionKeepsTurnsInTheWindow(t *testing.T) {
	t.Parallel()
	e, f := newFakeEnvAs(t, "fake", func(p *provider.Profile) { p.ContextTokens = 400 })
	e.createWith("c", `{"provider":"fake","title":"c"}`)
	for i := range 8 {
		e.say("c", strings.Repeat(fmt.Sprintf("word%02d ", i), 20))
		e.settle("c", i+1)
	}
	evs := e.settle("c", 8)
	var compactions []wire.Event
	byText := map[string]int64{}
	for _, ev := range evs {
		switch ev.Type {
		case wire.EventCompaction:
			compactions = append(compactions, ev)
		case wire.EventMessage:
			byText[ev.Text] = ev.Offset
		}
	}
	if len(compactions) < 2 {
		t.Fatalf("%d compactions in %d events", len(compactions), len(evs))
	}
	turns := 0
	for _, r := range f.Requests() {
		texts, tokens := contents(r)
		if tokens > 300 {
			t.Errorf("a request of about %d tokens, over the budget of 300: %q", tokens, texts)
		}
		if isSummary(r) {
			continue
		}
		turns++
		input := byText[texts[len(texts)-1]]
		// The compaction the turn follows: the newest that covers
		// messages before its input.
		var c *wire.Event
		for i := range compactions {
			if compactions[i].To < input && (c == nil || compactions[i].Offset > c.Offset) && compactionBefore(evs, compactions[i], input) {
				c = &compactions[i]
			}
		}
		var want []string
		after := int64(0)
		if c != nil {
			want = append(want, fmt.Sprintf("[A summary of messages %d to %d, which it stands for]\n\n%s", c.From, c.To, c.Text))
			after = c.To
		}
		for _, ev := range evs {
			if ev.Type == wire.EventMessage && ev.Offset > after && ev.Offset <= input {
				want = append(want, ev.Text)
			}
		}
		if fmt.Sprint(texts) != fmt.Sprint(want) {
			t.Fatalf("turn %d (input %d) sent\n%q\nwant\n%q", turns, input, texts, want)
		}
	}
	if turns != 8 {
		t.Fatalf("%d turns asked the provider", turns)
	}
	for _, c := range compactions {
		if c.From < 1 || c.To < c.From || c.To >= c.Offset || c.Author != "fake-model" || c.By != "albedo" || c.Text == "" || c.Usage == nil {
			t.Fatalf("a compaction: %+v", c)
		}
	}

	// By hand: each compaction goes on from the last and keeps the
	// newest quarter of the budget, until nothing is left to compact.
	last := compactions[len(compactions)-1].To
	for i := 0; ; i++ {
		var raw json.RawMessage
		code, _ := e.do("POST", "/v1/sessions/c/compact", nil, "", &raw)
		if code == http.StatusConflict && i > 0 {
			var er wire.ErrorBody
			if json.Unmarshal(raw, &er); er.Error.Code != wire.CodeConflict {
				t.Fatalf("compact with nothing to: %s", raw)
			}
			break
		}
		var manual wire.Event
		json.Unmarshal(raw, &manual)
		if code != http.StatusCreated || i == 10 || manual.Type != wire.EventCompaction || manual.By != "user" || manual.From <= last {
			t.Fatalf("compact by hand, %d: %d %s", i+1, code, raw)
		}
		last = manual.To
	}
	var er wire.ErrorBody
	e.create("plain")
	if code, _ := e.do("POST", "/v1/sessions/plain/compact", nil, "", &er); code != http.StatusBadRequest {
		t.Fatalf("compact an echo session: %d %+v", code, er)
	}

	// A rerun of the second input from a fork: the originals, no summary.
	second := byText[strings.Repeat("word01 ", 20)]
	var fork wire.Session
	if code, _ := e.do("POST", "/v1/sessions/c/fork", nil, fmt.Sprintf(`{"at":%d,"rerun":true}`, second), &fork); code != http.StatusCreated {
		t.Fatalf("fork: %d", code)
	}
	e.settle(fork.ID, 2)
	reqs := f.Requests()
	texts, _ := contents(reqs[len(reqs)-1])
	var want []string
	for _, ev := range evs {
		if ev.Type == wire.EventMessage && ev.Offset <= second {
			want = append(want, ev.Text)
		}
	}
	if fmt.Sprint(texts) != fmt.Sprint(want) {
		t.Fatalf("the fork's rerun sent\n%q\nwant the originals\n%q", texts, want)
	}
}

// compactionBefore says whether c was committed before the reply to the
// input at offset input: the turn that read the transcript saw it.
func compactionBefore(evs []wire.Event, c wire.Event, input int64) bool {
	for _, ev := range evs {
		if ev.Type == wire.EventMessage && ev.Role == wire.RoleAssistant && ev.Offset > input {
			return c.Offset < ev.Offset
		}
	}
	return true
}

// A turn's closing event counts the context its model was sent and
// answered with as compaction counts it (Event.Context): the meters show
// that count, so they never pass the window where the provider's
// reported tokens (summed over a turn's responses) would, and a session
// the meter shows past half its window always has something to compact.
func TestTheContextIsCompactionsCount(t *testing.T) {
	t.Parallel()
	e, f := newFakeEnvAs(t, "fake", func(p *provider.Profile) { p.ContextTokens = 400 })
	e.createWith("c", `{"provider":"fake","title":"c","system":"Be brief."}`)
	reply := "ok, noted"
	var last wire.Event
	for i := 0; last.Context < 200; i++ {
		if i == 12 {
			t.Fatalf("twelve turns and the context is %d", last.Context)
		}
		f.Push(fakeopenai.Reply{Chunks: []string{reply}, Usage: &fakeopenai.Usage{PromptTokens: 5000, CompletionTokens: 50}})
		e.say("c", strings.Repeat(fmt.Sprintf("note%02d ", i), 20))
		evs := e.settle("c", i+1)
		last = evs[len(evs)-1]
		_, sent := contents(f.Requests()[len(f.Requests())-1])
		if want := sent + provider.Tokens(reply) + provider.MessageOverhead; last.Type != wire.EventTurn || last.Context != want {
			t.Fatalf("turn %d: context %d, want the %d tokens sent and the reply's", i, last.Context, want)
		}
		if last.Context > 400 {
			t.Fatalf("turn %d: context %d past the window", i, last.Context)
		}
	}
	if code, _ := e.do("POST", "/v1/sessions/c/compact", nil, "", nil); code != http.StatusCreated {
		t.Fatalf("compact at %d of 400: %d", last.Context, code)
	}
}
