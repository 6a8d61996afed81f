package hub

import (
	"fmt"

	"albedo/db"
	"albedo/hub/provider"
	"albedo/hub/tools"
	"albedo/wire"
)

// Earlier turns' tool calls in a later turn's transcript: a provider that
// calls tools is sent them as its API took them when they were made (the
// assistant message that made them, then their results), so that the
// model knows what it did and learned; a compaction's summary covers them
// as text. The log is what they are read from, through a fork's spans
// too; the rows of tool_calls serve only the turn that runs them.

// transcriptTypes are the events a turn of p is sent: messages, and the
// calls and results of earlier turns when p calls tools.
func transcriptTypes(p provider.Provider) []wire.EventType {
	if _, ok := p.(provider.ToolCaller); ok {
		return db.MessagesAndTools
	}
	return db.Messages
}

// transcriptMessages are a transcript's events as a provider is sent
// them: each message as itself; each step of an earlier turn's calls as
// the assistant message that made them, with what the model said before
// them, and then their results, as the turn's own steps were sent
// (callMessages). A call whose result the transcript leaves out (its
// bounds or a compaction cut between them, or a fork was made while the
// call ran), or a result whose call it leaves out, is left out too: an
// API takes no call without its result.
func transcriptMessages(evs []wire.Event) []provider.Message {
	calls, results := map[string]bool{}, map[string]bool{}
	for _, e := range evs {
		switch e.Type {
		case wire.EventToolCall:
			calls[e.CallID] = true
		case wire.EventToolResult:
			results[e.CallID] = true
		}
	}
	out := make([]provider.Message, 0, len(evs))
	step := -1 // out's index of the message of the calls being read
	for _, e := range evs {
		switch e.Type {
		case wire.EventToolCall:
			if step < 0 && (results[e.CallID] || e.Text != "") {
				out = append(out, provider.Message{Role: wire.RoleAssistant, Author: e.Author, Text: e.Text})
				step = len(out) - 1
			}
			if step >= 0 && results[e.CallID] {
				out[step].Calls = append(out[step].Calls, provider.ToolCall{ID: e.CallID, Name: tools.APIName(e.Tool),
					Arguments: argsOrEmpty(string(e.Arguments))})
			}
		case wire.EventToolResult:
			step = -1
			if calls[e.CallID] {
				out = append(out, provider.Message{Role: provider.RoleTool, CallID: e.CallID, Text: modelResult(e.State, e.Text, e.Error), Files: filesOf(e.Attachments)})
			}
		default:
			step = -1
			out = append(out, provider.Message{Role: e.Role, Author: modelAuthor(e), Text: e.Text, Files: filesOf(e.Attachments)})
		}
	}
	return out
}

// summaryText is an event of a compaction's region as the summarizer
// reads it: a message's text; a call or a result told as text, since a
// summary's request offers no tools.
func summaryText(e wire.Event) (wire.Role, string) {
	switch e.Type {
	case wire.EventToolCall:
		call := fmt.Sprintf("[called %s with %s]", e.Tool, argsOrEmpty(string(e.Arguments)))
		if e.Text != "" {
			call = e.Text + "\n" + call
		}
		return wire.RoleAssistant, call
	case wire.EventToolResult:
		return wire.RoleUser, "[a tool's result]\n" + modelResult(e.State, e.Text, e.Error) + fileNames(e.Attachments)
	}
	return e.Role, e.Text + fileNames(e.Attachments)
}

// eventTokens is what an event costs in a transcript.
func eventTokens(e wire.Event) int {
	return msgTokens(e.Text) + provider.Tokens(string(e.Arguments)) + provider.FileTokens(e.Attachments)
}
