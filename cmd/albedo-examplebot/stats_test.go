package main

import (
	"strings"
	"testing"

	"albedo/wire"
)

func TestStats(t *testing.T) {
	t.Parallel()
	got := strings.Join(stats([]wire.TurnMessage{
		{Role: "user", Text: "hello albedo, count these words"},
		{Role: "assistant", Text: "albedo counts words"},
		{Role: "user", Text: "words words"},
	}), "")
	for _, want := range []string{
		"3 messages (2 user, 1 assistant), 10 words in all.",
		"Your message has 2 words and 11 characters.",
		`Most used words: "words" (4×), "albedo" (2×), "count" (1×).`,
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("stats %q lacks %q", got, want)
		}
	}
	if got := stats(nil); len(got) != 1 {
		t.Fatalf("empty transcript: %q", got)
	}
}
