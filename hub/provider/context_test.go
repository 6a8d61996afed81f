package provider

import (
	"strings"
	"testing"
)

// The estimate: a token per 4 bytes of ASCII, one per other character.
func TestTokens(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"a", 1},
		{"abcd", 1},
		{"abcde", 2},
		{"日本語", 3},
		{"café", 2},
		{"\xff\xfe", 2}, // bytes that are no character count as one each
	} {
		if got := Tokens(c.text); got != c.want {
			t.Errorf("Tokens(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

// A model's window by its family, a router's prefix aside; a profile's
// context_tokens wins.
func TestDefaultContext(t *testing.T) {
	for model, want := range map[string]int{
		"claude-sonnet-4-5": 200_000, "gpt-4.1-mini": 1_047_576, "gpt-4o": 128_000, "gpt-4": 8_192,
		"openai/gpt-5": 400_000, "o3-mini": 200_000, "llama3.2": 8_192, "something-new": UnknownContext, "": UnknownContext,
	} {
		if got := DefaultContext(model); got != want {
			t.Errorf("DefaultContext(%q) = %d, want %d", model, got, want)
		}
	}
	if got := (window{tokens: 1000}).of("claude-x"); got != 1000 {
		t.Errorf("a profile's context_tokens: %d", got)
	}
}

// BenchmarkTokens counts the tokens of a transcript of 100 messages of
// 500 bytes (prose with some non-ASCII): what a turn of that size costs
// to count.
func BenchmarkTokens(b *testing.B) {
	msg := strings.Repeat("The quick brown fox jumps over the lazy dog; café, naïve. ", 9)[:500]
	b.SetBytes(100 * int64(len(msg)))
	for b.Loop() {
		n := 0
		for range 100 {
			n += Tokens(msg) + MessageOverhead
		}
		if n == 0 {
			b.Fatal("no tokens")
		}
	}
}
