package provider

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"albedo/wire"
)

// RoleTool is a tool's result in the transcript sent to a provider. It is
// no role of the log: the log keeps results as tool_result events.
const RoleTool = "tool"

// Tool is one tool a provider offers its model, under a name the
// provider's API accepts (the turn runner maps the full name to it and
// back).
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage // a JSON Schema object
}

// ToolCall is one call the model made: its id as the API gave it, the
// tool's name as offered, and its arguments as the model wrote them
// (meant to be a JSON object; the turn runner checks).
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// MaxArgumentBytes bounds one call's arguments as a provider collects
// them: past it the call is kept with its arguments cut, and the turn
// runner fails it, saying so.
const MaxArgumentBytes = 64 << 10

// addArgs appends a streamed piece of a call's arguments, within
// MaxArgumentBytes.
func addArgs(args *[]byte, piece string) {
	if room := MaxArgumentBytes + 1 - len(*args); room > 0 {
		*args = append(*args, piece[:min(len(piece), room)]...)
	}
}

// toolSchema is a tool's schema as a map, as the SDKs take it; an
// object with no properties when it does not parse (CheckSpecs has
// refused that already).
func toolSchema(raw json.RawMessage) map[string]any {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m == nil {
		m = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return m
}

// callsAsText is msgs for a request that offers no tools: each call an
// earlier turn made, and each result, told as text, since an API refuses
// calls of tools it was not given (Anthropic's does).
func callsAsText(msgs []Message) []Message {
	names := map[string]string{}
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		switch {
		case m.Role == RoleTool:
			out = append(out, Message{Role: wire.RoleUser,
				Text: fmt.Sprintf("[the result of %s]\n%s", cmp.Or(names[m.CallID], "a tool call"), m.Text)})
		case len(m.Calls) > 0:
			var b strings.Builder
			b.WriteString(m.Text)
			for _, c := range m.Calls {
				names[c.ID] = c.Name
				if b.Len() > 0 {
					b.WriteString("\n")
				}
				fmt.Fprintf(&b, "[called %s with %s]", c.Name, c.Arguments)
			}
			m.Text, m.Calls = b.String(), nil
			out = append(out, m)
		default:
			out = append(out, m)
		}
	}
	return out
}
