package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"albedo/wire"
)

// wordCount is the tool the bot serves: a model in any session the bot
// may act in can call it as bot:NAME/word_count.
var wordCount = wire.ToolSpec{
	Name:        "word_count",
	Description: "Counts the words of a text (runs of non-space characters).",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"The text to count."}},"required":["text"]}`),
}

// countWords runs a call of word_count: its output, or why it failed.
func countWords(args json.RawMessage) (string, string) {
	var in struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(args, &in); err != nil || in.Text == nil {
		return "", `word_count needs {"text": "…"}`
	}
	return fmt.Sprintf("%d words", len(strings.Fields(*in.Text))), ""
}

// tool answers a call handed to the bot.
func (b *bot) tool(ctx context.Context, t wire.ToolPush) {
	b.log.Info("tool", "session", t.Session, "call", t.CallID, "tool", t.Tool)
	out, errText := "", fmt.Sprintf("no tool %q", t.Tool)
	if t.Tool == wordCount.Name {
		out, errText = countWords(t.Arguments)
	}
	if err := b.st.ToolResult(ctx, t.CallID, out, errText); err != nil {
		b.log.Warn("tool result", "call", t.CallID, "err", err)
	}
}
