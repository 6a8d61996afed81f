package provider

import (
	"testing"

	"github.com/openai/openai-go/v3"
)

// FuzzToolCallPieces feeds the gatherers of streamed tool calls what a
// stream may hold (any index, id, name and pieces of arguments, in any
// order) and holds them to their bounds: at most maxStreamedCalls calls,
// names of 256 bytes or fewer, arguments of at most MaxArgumentBytes+1
// (one more says they were cut).
func FuzzToolCallPieces(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3}, "call_1", "bot__w__f", `{"city":`, int64(3))
	f.Add([]byte{255, 0, 255}, "", "", "", int64(-1))
	f.Fuzz(func(t *testing.T, order []byte, id, name, piece string, block int64) {
		var o openAICalls
		var a anthropicCalls
		for i, b := range order {
			idx := int64(b) + block*int64(i%3)
			o.add([]openai.ChatCompletionChunkChoiceDeltaToolCall{{Index: idx, ID: id, Function: openai.ChatCompletionChunkChoiceDeltaToolCallFunction{Name: name, Arguments: piece}}})
			if b%2 == 0 {
				a.start(idx, id, name)
			}
			a.add(idx, piece)
		}
		for _, gathered := range [][]ToolCall{collectCalls(o.report), collectCalls(a.report)} {
			if len(gathered) > maxStreamedCalls {
				t.Fatalf("%d calls", len(gathered))
			}
			for _, c := range gathered {
				if len(c.Name) > 256+len(name) || len(c.Arguments) > MaxArgumentBytes+1 {
					t.Fatalf("a call of %d bytes of name, %d of arguments", len(c.Name), len(c.Arguments))
				}
			}
		}
	})
}

func collectCalls(report func(func(ToolCall))) []ToolCall {
	var out []ToolCall
	report(func(c ToolCall) { out = append(out, c) })
	return out
}
