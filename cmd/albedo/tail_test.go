package main

import (
	"strings"
	"testing"

	"albedo/wire"
)

// albedo tail shows each tool call's event on a line: the call (after
// what the model said), a decision, a result with its output's first
// line or its error.
func TestCallLine(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		ev   wire.Event
		want string
	}{
		{wire.Event{Offset: 3, Type: wire.EventToolCall, Author: "m", Text: "Counting.", Tool: "bot:example/word_count", Arguments: []byte(`{"text":"a b"}`), Policy: "ask", CallID: "c1"},
			"#3 assistant m: Counting.\n#3 tool call bot:example/word_count {\"text\":\"a b\"} (ask) [c1]"},
		{wire.Event{Offset: 4, Type: wire.EventApproval, Decision: "deny", Author: "ann", CallID: "c1", Reason: "no"},
			"#4 deny by ann [c1] no"},
		{wire.Event{Offset: 5, Type: wire.EventToolResult, State: "completed", CallID: "c1", Text: "2 words\nmore"},
			"#5 tool result completed [c1] 2 words"},
		{wire.Event{Offset: 5, Type: wire.EventToolResult, State: "failed", CallID: "c1", Error: "boom"},
			"#5 tool result failed [c1] boom"},
	} {
		if got := callLine(&tt.ev); got != tt.want {
			t.Errorf("callLine(%s) = %q, want %q", tt.ev.Type, got, tt.want)
		}
	}
}

// -n reads as tail(1)'s: N, or +N for "from event #N on".
func TestParseLines(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		v        string
		n        int
		from     int64
		wantFail bool
	}{
		{"5", 5, 0, false}, {"0", 0, 0, false}, {"+1", 0, 1, false}, {"+40", 0, 40, false},
		{"-3", 0, 0, true}, {"+0", 0, 0, true}, {"x", 0, 0, true}, {"", 0, 0, true},
	} {
		n, from, err := parseLines(tt.v, true)
		if (err != nil) != tt.wantFail || n != tt.n || from != tt.from {
			t.Errorf("parseLines(%q) = %d, %d, %v", tt.v, n, from, err)
		}
	}
}

// A settings event shows every setting it changed, a long system text
// cut short.
func TestTailLineSettings(t *testing.T) {
	t.Parallel()
	effort, system := "high", strings.Repeat("Be brief. ", 30)
	line, ok := tailLine(&wire.Event{Offset: 5, Type: wire.EventSettings, By: "ann", Effort: &effort, System: &system})
	want := `#5 settings by ann: {"effort":"high","system":"` + system[:200] + `…"}`
	if !ok || line != want {
		t.Errorf("tailLine = %q, %v; want %q", line, ok, want)
	}
}
