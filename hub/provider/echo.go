package provider

import (
	"context"
	"strings"

	"albedo/wire"
)

// Echo replies "echo: <last user text>", streamed a word at a time so that
// a fresh machine with no network shows a real streaming reply.
type Echo struct{}

// Author implements Provider.
func (Echo) Author(Request) string { return "echo" }

// MaxMessages implements HistoryLimiter: echo answers the last message.
func (Echo) MaxMessages() int { return 1 }

// Stream implements Provider.
func (Echo) Stream(ctx context.Context, req Request, emit func(string)) error {
	text := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == wire.RoleUser {
			text = req.Messages[i].Text
			break
		}
	}
	reply := "echo: " + text
	// Split after each space, keeping the spaces, so the pieces rejoin
	// exactly.
	for len(reply) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := strings.IndexByte(reply, ' ') + 1
		if n <= 0 {
			n = len(reply)
		}
		emit(reply[:n])
		reply = reply[n:]
	}
	return nil
}
