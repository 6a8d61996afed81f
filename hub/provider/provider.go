package provider

import (
	"context"

	"albedo/wire"
)

// Message is one entry of the transcript sent to a provider.
type Message struct {
	Role   wire.Role
	Author string
	Text   string
	// Calls are an assistant message's tool calls, after its Text.
	Calls []ToolCall
	// CallID is the call a RoleTool message answers; Text is its result.
	CallID string
	// Files are the files the message carries (files.go): images to a
	// provider that takes them (Images), the rest as text.
	Files []File
}

// Request is one turn's question.
type Request struct {
	Session  string
	TurnID   string
	Messages []Message
	Model    string // the session's model; "" means the provider's default
	Effort   string // the session's reasoning effort; "" means none is sent
	// Temperature is the session's, sent where the API takes one; nil
	// sends none (the provider's own).
	Temperature *float64
	InputID     string
	AuthorID    string // who wrote the input (wire.Event.AuthorID)
	Provider    string // the provider's name, as the session resolves it
	// Earlier says older messages were left out of Messages, by the
	// bounds of a provider with no context window (a bot's).
	Earlier bool

	// Waiting, if set, tells the daemon the turn waits for someone to
	// answer it (a bot that is not connected) or no longer does.
	Waiting func(bool)
	// Restart, if set, drops the text emitted so far: the reply starts
	// over (a bot connection dropped and another one answers).
	Restart func()
	// Files, if set, takes the files the reply carries (a bot's reply's
	// attachments, resolved against the store), all of them at each call:
	// the last call counts.
	Files func([]wire.Attachment)
	// Usage, if set, takes the turn's token usage, from a provider that
	// reports it (the last report counts). One that never calls it
	// reported none: the turn says so (null), not zero.
	Usage func(wire.Usage)

	// Tools are offered to the model; with none, it is offered none.
	Tools []Tool
	// Call, if set, takes each call the model made, in order, once the
	// call is whole. A provider that reports calls returns nil when the
	// model's response ended with them: the turn runner runs them and
	// asks again, with the calls and their results in Messages.
	Call func(ToolCall)
}

// Provider answers turns. Implementations may be called concurrently for
// different turns.
type Provider interface {
	// Stream produces the reply, calling emit with each new piece of text in
	// order, from the calling goroutine or one it waits for.
	Stream(ctx context.Context, req Request, emit func(text string)) error
	// Author names the replier in the committed message (e.g. the model).
	Author(req Request) string
}

// HistoryLimiter is implemented by providers that need fewer of the newest
// messages than the daemon would send (echo needs only the last one), which
// spares reading the whole transcript at every turn.
type HistoryLimiter interface {
	MaxMessages() int
}
