package main

import (
	"strings"
	"testing"
	"time"

	"albedo/wire"
)

// Each kind of event becomes what a reader of the transcript needs, and
// the events that say nothing new (a turn started or completed) nothing.
func TestMarkdownEvent(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 6, 45, 24, 0, time.UTC)
	title := "plans"
	tests := []struct {
		name string
		ev   wire.Event
		want string
	}{
		{"a user message", wire.Event{Offset: 1, Type: wire.EventMessage, At: at, Role: wire.RoleUser, Author: "user", Text: "hi\n", State: wire.MessageComplete},
			"\n## user\n\n<sub>#1 · 2026-11-30 06:45:24Z</sub>\n\nhi\n"},
		{"an interrupted reply of a bot", wire.Event{Offset: 3, Type: wire.EventMessage, At: at, Role: wire.RoleAssistant, Author: "helper", Text: "so far", State: wire.MessageInterrupted},
			"\n## assistant (helper) — interrupted\n\n<sub>#3 · 2026-11-30 06:45:24Z</sub>\n\nso far\n"},
		{"a failed turn", wire.Event{Type: wire.EventTurn, At: at, State: wire.TurnFailed, Error: "model crashed"},
			"\n> **The turn failed** (2026-11-30 06:45:24Z): model crashed\n"},
		{"a title set", wire.Event{Type: wire.EventSettings, At: at, Title: &title, By: "user"},
			"\n> *user set title \"plans\"* (2026-11-30 06:45:24Z)\n"},
		{"a tool call after words", wire.Event{Offset: 4, Type: wire.EventToolCall, At: at, Author: "m", Text: "Counting.", CallID: "c1", Tool: "bot:example/word_count", Arguments: []byte(`{"text":"a b"}`), Policy: "ask"},
			"\n## assistant (m)\n\n<sub>#4 · 2026-11-30 06:45:24Z</sub>\n\nCounting.\n" +
				"\n> **Tool call** `bot:example/word_count` (ask, 2026-11-30 06:45:24Z, call c1):\n>\n> ```json\n> {\"text\":\"a b\"}\n> ```\n"},
		{"a decision", wire.Event{Type: wire.EventApproval, At: at, Author: "ann", CallID: "c1", Decision: "allow", Reason: "fine"},
			"\n> *ann decided allow* on call c1 (2026-11-30 06:45:24Z): fine\n"},
		{"a result", wire.Event{Type: wire.EventToolResult, At: at, CallID: "c1", State: wire.ToolCompleted, Text: "2 words\nin all"},
			"\n> **Tool result** (completed, call c1, 2026-11-30 06:45:24Z):\n>\n> ```\n> 2 words\n> in all\n> ```\n"},
		{"a failed result", wire.Event{Type: wire.EventToolResult, At: at, CallID: "c1", State: wire.ToolDenied, Error: "denied by ann"},
			"\n> **Tool result** (denied, call c1, 2026-11-30 06:45:24Z): denied by ann\n"},
		{"a turn started", wire.Event{Type: wire.EventTurn, At: at, State: wire.TurnStarted}, ""},
		{"a turn completed", wire.Event{Type: wire.EventTurn, At: at, State: wire.TurnCompleted}, ""},
	}
	for _, tt := range tests {
		if got := markdownEvent(tt.ev); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// export --all names each file by its session's title and short id, in
// characters every file system takes.
func TestExportFileName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 40)
	for _, tt := range []struct{ title, want string }{
		{"Weekly plans", "weekly-plans-0039d669.md"},
		{"../../etc/passwd", "etc-passwd-0039d669.md"},
		{"  ", "session-0039d669.md"},
		{"", "session-0039d669.md"},
		{"a/b: c?", "a-b-c-0039d669.md"},
		{long, strings.Repeat("é", 30) + "-0039d669.md"},
	} {
		if got := exportFileName(wire.Session{Title: tt.title}, "0039d669", "md"); got != tt.want {
			t.Errorf("exportFileName(%q) = %q, want %q", tt.title, got, tt.want)
		}
	}
}
