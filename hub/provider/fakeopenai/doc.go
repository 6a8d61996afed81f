// Package fakeopenai is a test double of an OpenAI-compatible
// chat-completions endpoint that speaks the real streaming wire format
// (server-sent events with chat.completion.chunk objects, then
// "data: [DONE]"). It records every request body and replies as scripted:
// echo, an error status, a stream that breaks, or a reply that blocks until
// released; models.go answers GET /v1/models, the list a model picker
// reads. It is the only fake of an outside service in albedo's tests.
package fakeopenai
