package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"albedo/wire"
)

// wordCount is the tool the bot serves: a model in any session the bot
// may act in can call it as bot:NAME/word_count.
var wordCount = wire.ToolSpec{
	Name:        "word_count",
	Description: "Counts the words of a text (runs of non-space characters).",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"The text to count."}},"required":["text"]}`),
}

// countWords reads a call of word_count: the words of its text, or why
// it cannot run.
func countWords(args json.RawMessage) (int, string) {
	var in struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(args, &in); err != nil || in.Text == nil {
		return 0, `word_count needs {"text": "…"}`
	}
	return len(strings.Fields(*in.Text)), ""
}

// tool answers a call handed to the bot. word_count takes a pace a word,
// as a tool that takes its time would: a call may outlast the bot's
// connection, or the bot, and the daemon then hands it to the bot's next
// connection.
func (b *bot) tool(ctx context.Context, t wire.ToolPush) {
	b.log.Info("tool", "session", t.Session, "call", t.CallID, "tool", t.Tool)
	out, errText := "", fmt.Sprintf("no tool %q", t.Tool)
	if t.Tool == wordCount.Name {
		var n int
		if n, errText = countWords(t.Arguments); errText == "" {
			select {
			case <-time.After(time.Duration(n) * b.pace):
			case <-ctx.Done():
				return
			}
			out = fmt.Sprintf("%d words", n)
		}
	}
	if err := b.st.ToolResult(ctx, t.CallID, out, errText); err != nil {
		b.log.Warn("tool result", "call", t.CallID, "err", err)
	}
}
