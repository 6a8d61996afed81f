package main

import (
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
