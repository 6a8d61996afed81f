package hub

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"albedo/hub/provider"
	"albedo/wire"
)

// A transcript cut between a call and its result (by its bounds, a
// compaction, or a fork made while the call ran) sends neither: an API
// takes no call without its result, and no result without its call. What
// the model said before a call whose result is left out is kept.
func TestTranscriptLeavesOutHalvesOfCalls(t *testing.T) {
	call := func(id, text string) wire.Event {
		return wire.Event{Type: wire.EventToolCall, CallID: id, Tool: "bot:b/t", Text: text, Arguments: json.RawMessage(`{}`)}
	}
	result := func(id string) wire.Event {
		return wire.Event{Type: wire.EventToolResult, CallID: id, State: wire.ToolCompleted, Text: "out " + id}
	}
	msg := func(role wire.Role, text string) wire.Event {
		return wire.Event{Type: wire.EventMessage, Role: role, Author: "a", Text: text}
	}
	evs := []wire.Event{
		result("gone"), // its call was cut off
		msg(wire.RoleUser, "q1"),
		call("a", "thinking"), call("b", ""), result("b"), // a's result is past the fork
		msg(wire.RoleUser, "q2"),
		call("c", "said"), // no result: its text is kept, alone
		msg(wire.RoleUser, "q3"),
		call("d", ""), call("e", ""), result("e"), result("d"),
		call("f", "step 2"), result("f"),
		msg(wire.RoleAssistant, "done"),
	}
	var got []string
	for _, m := range transcriptMessages(evs) {
		s := fmt.Sprintf("%s:%s", m.Role, m.Text)
		for _, c := range m.Calls {
			s += "+" + c.ID + "(" + c.Name + ")"
		}
		if m.Role == provider.RoleTool {
			s = "tool:" + m.CallID
		}
		got = append(got, s)
	}
	want := "user:q1 | assistant:thinking+b(bot__b__t) | tool:b | user:q2 | assistant:said | user:q3 | " +
		"assistant:+d(bot__b__t)+e(bot__b__t) | tool:e | tool:d | assistant:step 2+f(bot__b__t) | tool:f | assistant:done"
	if strings.Join(got, " | ") != want {
		t.Fatalf("sent\n%s\nwant\n%s", strings.Join(got, " | "), want)
	}
}

// A source's error is bounded as its output is: cut, saying so, never
// in the middle of a character.
func TestToolErrorsAreCut(t *testing.T) {
	long := strings.Repeat("é", wire.MaxToolError) // two bytes each
	got := cutError(long)
	if len(got) > wire.MaxToolError+64 || !strings.HasSuffix(got, fmt.Sprintf("[the error was cut at %d of its %d bytes]", wire.MaxToolError, len(long))) ||
		!utf8.ValidString(got) {
		t.Fatalf("cut to %d bytes: ...%q", len(got), got[len(got)-60:])
	}
	if cutError("short") != "short" {
		t.Fatal("a short error was changed")
	}
}
