package tools

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNames(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"forecast": true, "get_weather-2": true, strings.Repeat("a", 64): true,
		"": false, strings.Repeat("a", 65): false, "Forecast": false, "a.b": false, "a/b": false, "a b": false, "é": false,
	} {
		if ValidName(name) != ok {
			t.Errorf("ValidName(%q) = %v", name, !ok)
		}
	}
	full := FullName(SourceBot, "weather", "forecast")
	if full != "bot:weather/forecast" {
		t.Fatalf("full name %q", full)
	}
	if src, owner, tool, ok := ParseFull(full); !ok || src != SourceBot || owner != "weather" || tool != "forecast" {
		t.Fatalf("ParseFull(%q) = %v %v %v %v", full, src, owner, tool, ok)
	}
	for _, bad := range []string{"weather/forecast", "acp:a/b", "bot:a", "bot:/b", "bot:a/", "bot:A/b", "mcp:a/b/c"} {
		if _, _, _, ok := ParseFull(bad); ok {
			t.Errorf("ParseFull(%q) took it", bad)
		}
	}
}

// The last rule that matches decides; with none, ask. * spans the colon
// and the slash.
func TestPolicy(t *testing.T) {
	t.Parallel()
	p, err := NewPolicy([]Rule{
		{"*", Allow},
		{"bot:*", Ask},
		{"bot:weather/*", Allow},
		{"mcp:fs/write_*", Deny},
		{"mcp:fs/write_?ote", Ask},
	})
	if err != nil {
		t.Fatal(err)
	}
	for full, want := range map[string]Decision{
		"mcp:github/list_issues": Allow,
		"bot:deploy/run":         Ask,
		"bot:weather/forecast":   Allow,
		"mcp:fs/write_file":      Deny,
		"mcp:fs/write_note":      Ask,
	} {
		if got := p.Of(full); got != want {
			t.Errorf("%s: %s, want %s", full, got, want)
		}
	}
	if got := (Policy{}).Of("bot:a/b"); got != Ask {
		t.Errorf("no rules: %s, want ask", got)
	}
	for _, bad := range [][]Rule{{{"", Allow}}, {{"bot:*", "maybe"}}, {{"bot:*", AllowSession}}, {{strings.Repeat("*", 257), Allow}}, {{"a\nb", Deny}}} {
		if _, err := NewPolicy(bad); err == nil {
			t.Errorf("NewPolicy(%+v) took it", bad)
		}
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		glob, name string
		want       bool
	}{
		{"", "", true}, {"", "a", false}, {"*", "", true}, {"a*", "a", true},
		{"a*c", "abbbc", true}, {"a*c", "abbbd", false}, {"a?c", "abc", true}, {"a?c", "ac", false},
		{"*/x", "bot:a/x", true}, {"*a*b*c*", "xaybzc", true}, {"*a*b*c*", "xaybz", false},
		{"bot:*/run", "bot:deploy/run", true}, {"bot:*/run", "bot:deploy/run2", false},
	} {
		if got := Match(c.glob, c.name); got != c.want {
			t.Errorf("Match(%q, %q) = %v", c.glob, c.name, got)
		}
	}
	// Many stars against a long name that does not match: bounded work.
	glob, name := strings.Repeat("*a", 100)+"b", strings.Repeat("a", 10000)
	began := time.Now()
	if Match(glob, name) {
		t.Fatal("matched")
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("a pathological glob took %v", d)
	}
}

// A call's life: what the policy allows runs, denies is denied, asks
// waits; the first decision wins; allow_session lets the tool's later
// calls run; expiry and an interrupt end what waits.
func TestCalls(t *testing.T) {
	t.Parallel()
	p, _ := NewPolicy([]Rule{{"bot:ok/*", Allow}, {"bot:no/*", Deny}})
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	c := NewCalls(p, time.Hour)
	must := func(want State) func(*Call, error) *Call {
		return func(call *Call, err error) *Call {
			t.Helper()
			if err != nil || call.State != want {
				t.Fatalf("call %+v, %v: want %s", call, err, want)
			}
			return call
		}
	}
	must(Running)(c.Request("c1", "t1", "bot:ok/x", 3, at))
	must(Denied)(c.Request("c2", "t1", "bot:no/x", 4, at))
	ask := must(Pending)(c.Request("c3", "t1", "bot:maybe/x", 5, at))
	if ask.Policy != Ask || !ask.ExpiresAt.Equal(at.Add(time.Hour)) {
		t.Fatalf("a call that asks: %+v", ask)
	}
	if _, err := c.Request("c3", "t1", "bot:maybe/x", 6, at); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("a second call c3: %v", err)
	}
	if got := c.Pending(); len(got) != 1 || got[0].ID != "c3" {
		t.Fatalf("pending %+v", got)
	}
	if _, err := c.Decide("c3", "maybe", "ann"); !errors.Is(err, ErrBadDecision) {
		t.Fatalf("a bad decision: %v", err)
	}
	if _, err := c.Decide("nope", Allow, "ann"); !errors.Is(err, ErrUnknownCall) {
		t.Fatalf("an unknown call: %v", err)
	}
	call := must(Running)(c.Decide("c3", AllowSession, "ann"))
	if call.DecidedBy != "ann" || !call.ExpiresAt.IsZero() {
		t.Fatalf("decided: %+v", call)
	}
	if _, err := c.Decide("c3", Deny, "bob"); !errors.Is(err, ErrDecided) {
		t.Fatalf("a second decision: %v", err)
	}
	must(Running)(c.Request("c4", "t2", "bot:maybe/x", 9, at)) // allowed for the session now
	if got := c.AllowedForSession(); len(got) != 1 || got[0] != "bot:maybe/x" {
		t.Fatalf("allowed for the session: %v", got)
	}
	if err := c.End("c4", Completed); err != nil {
		t.Fatal(err)
	}
	if err := c.End("c4", Failed); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("a second result: %v", err)
	}
	if err := c.End("c1", Denied); !errors.Is(err, ErrBadResult) {
		t.Fatalf("a result of another kind: %v", err)
	}

	must(Pending)(c.Request("c5", "t3", "bot:other/x", 10, at))
	must(Pending)(c.Request("c6", "t3", "bot:other/y", 11, at.Add(30*time.Minute)))
	if got := c.Expire(at.Add(time.Hour)); len(got) != 1 || got[0].ID != "c5" || got[0].State != Expired {
		t.Fatalf("expired %+v", got)
	}
	must(Running)(c.Request("c7", "t3", "bot:ok/y", 12, at))
	got := c.Cancel("t3")
	if len(got) != 2 || got[0].ID != "c6" || got[1].ID != "c7" || got[0].State != Cancelled {
		t.Fatalf("cancelled %+v", got)
	}
	if len(c.Pending()) != 0 {
		t.Fatalf("pending after all: %+v", c.Pending())
	}
}

// The log rebuilds the calls after a restart: a pending call is pending
// with its expiry, a tool allowed for the session still is, and a log
// that contradicts itself is refused at the record that does.
func TestReplay(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	recs := []Record{
		{Kind: RecordCall, CallID: "c1", Turn: "t1", Tool: "bot:a/x", Policy: Ask, Offset: 3, At: at},
		{Kind: RecordApproval, CallID: "c1", Decision: AllowSession, Author: "ann", Offset: 4},
		{Kind: RecordResult, CallID: "c1", State: Completed, Offset: 5},
		{Kind: RecordCall, CallID: "c2", Turn: "t1", Tool: "bot:a/y", Policy: Deny, Offset: 6, At: at},
		{Kind: RecordResult, CallID: "c2", State: Denied, Offset: 7},
		{Kind: RecordCall, CallID: "c3", Turn: "t1", Tool: "bot:b/z", Policy: Ask, Offset: 8, At: at},
	}
	c := NewCalls(Policy{}, time.Hour)
	if err := c.Replay(recs); err != nil {
		t.Fatal(err)
	}
	p := c.Pending()
	if len(p) != 1 || p[0].ID != "c3" || !p[0].ExpiresAt.Equal(at.Add(time.Hour)) {
		t.Fatalf("pending after replay: %+v", p)
	}
	if next, _ := c.Request("c4", "t2", "bot:a/x", 9, at); next.State != Running {
		t.Fatalf("a tool allowed for the session, after replay: %+v", next)
	}
	for _, bad := range [][]Record{
		{{Kind: RecordResult, CallID: "x", State: Completed, Offset: 1}},
		{recs[0], recs[1], {Kind: RecordApproval, CallID: "c1", Decision: Deny, Offset: 9}},
		{recs[0], recs[1], recs[2], {Kind: RecordResult, CallID: "c1", State: Failed, Offset: 10}},
		{{Kind: "other", Offset: 2}},
	} {
		err := NewCalls(Policy{}, time.Hour).Replay(bad)
		var re *ReplayError
		if !errors.As(err, &re) || re.Offset != bad[len(bad)-1].Offset {
			t.Errorf("replay of %+v: %v, want an error at its last record", bad, err)
		}
	}
}

// What a source declares is checked whole, and the error names the tool.
func TestCheckSpecs(t *testing.T) {
	t.Parallel()
	ok := []Spec{
		{Name: "forecast", Description: "the weather", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
		{Name: "now", InputSchema: json.RawMessage(` {} `)},
	}
	if err := CheckSpecs(ok); err != nil {
		t.Fatal(err)
	}
	many := make([]Spec, MaxTools+1)
	for i := range many {
		many[i] = Spec{Name: "t" + strconv.Itoa(i), InputSchema: json.RawMessage(`{}`)}
	}
	for name, c := range map[string]struct {
		specs []Spec
		says  string
	}{
		"a bad name":         {[]Spec{{Name: "Forecast", InputSchema: json.RawMessage(`{}`)}}, `name "Forecast"`},
		"twice":              {[]Spec{ok[0], ok[0]}, "declared twice"},
		"a long description": {[]Spec{{Name: "a", Description: strings.Repeat("d", MaxDescriptionBytes+1), InputSchema: json.RawMessage(`{}`)}}, "the limit is 4096"},
		"a NUL":              {[]Spec{{Name: "a", Description: "a\x00b", InputSchema: json.RawMessage(`{}`)}}, "not UTF-8 text"},
		"no schema":          {[]Spec{{Name: "a"}}, "not a JSON object"},
		"an array schema":    {[]Spec{{Name: "a", InputSchema: json.RawMessage(`[]`)}}, "not a JSON object"},
		"a string type":      {[]Spec{{Name: "a", InputSchema: json.RawMessage(`{"type":"string"}`)}}, `type "string"`},
		"a broken schema":    {[]Spec{{Name: "a", InputSchema: json.RawMessage(`{"type":`)}}, "not a JSON object"},
		"a huge schema":      {[]Spec{{Name: "a", InputSchema: json.RawMessage(`{"d":"` + strings.Repeat("x", MaxSchemaBytes) + `"}`)}}, "the limit is 65536"},
		"too many":           {many, "the limit is 128"},
	} {
		err := CheckSpecs(c.specs)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want it to say %q", name, err, c.says)
		}
	}
}
