package main

import (
	"strings"
	"testing"

	"albedo/wire"
)

// The printer shows each piece of a reply once and ends its line with the
// committed message's rest; whatever interrupts the line ends it first.
func TestReplyPrinter(t *testing.T) {
	t.Parallel()
	type step struct {
		op     wire.Op // partial, delta, or event (a commit)
		turn   string
		text   string
		other  string // printed by the caller between pieces (breaks the line)
		wantOK bool   // what commit returns
	}
	tests := []struct {
		name  string
		steps []step
		want  string
	}{
		{"deltas then commit", []step{
			{op: wire.PushDelta, turn: "t", text: "hello "},
			{op: wire.PushDelta, turn: "t", text: "world"},
			{op: wire.PushEvent, turn: "t", text: "hello world!", wantOK: true},
		}, "> hello world!\n"},
		{"a partial after deltas repeats nothing", []step{
			{op: wire.PushDelta, turn: "t", text: "hel"},
			{op: wire.PushPartial, turn: "t", text: "hello"},
			{op: wire.PushEvent, turn: "t", text: "hello", wantOK: true},
		}, "> hello\n"},
		{"a reply that starts over starts a line", []step{
			{op: wire.PushDelta, turn: "t", text: "first try"},
			{op: wire.PushPartial, turn: "t", text: ""},
			{op: wire.PushDelta, turn: "t", text: "second"},
			{op: wire.PushEvent, turn: "t", text: "second", wantOK: true},
		}, "> first try\n> second\n"},
		{"a line broken by other output", []step{
			{op: wire.PushDelta, turn: "t", text: "abc"},
			{other: "#5 user: hi\n"},
			{op: wire.PushDelta, turn: "t", text: "def"},
			{op: wire.PushEvent, turn: "t", text: "abcdef", wantOK: true},
		}, "> abc\n#5 user: hi\n> abcdef\n"},
		{"a commit of another turn is the caller's", []step{
			{op: wire.PushDelta, turn: "t", text: "abc"},
			{op: wire.PushEvent, turn: "u", text: "other", wantOK: false},
		}, "> abc\n"},
		{"nothing streamed", []step{
			{op: wire.PushEvent, turn: "t", text: "whole", wantOK: false},
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			p := &replyPrinter{w: &b, prefix: "> "}
			for i, s := range tt.steps {
				switch {
				case s.other != "":
					p.breakLine()
					b.WriteString(s.other)
				case s.op == wire.PushEvent:
					if ok := p.commit(&wire.Event{TurnID: s.turn, Text: s.text}, ""); ok != s.wantOK {
						t.Fatalf("step %d: commit returned %v", i, ok)
					}
				default:
					p.text(s.op, &wire.TextPush{TurnID: s.turn, Text: s.text})
				}
			}
			if b.String() != tt.want {
				t.Fatalf("printed %q, want %q", b.String(), tt.want)
			}
		})
	}
}
