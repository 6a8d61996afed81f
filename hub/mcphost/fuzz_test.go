package mcphost

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"albedo/hub/tools"
)

// A server's tool result, whatever its bytes, is told to the model as
// UTF-8 text and files that say what they are, named with no path, or
// refused by the SDK's decoder: never a panic.
func FuzzResultText(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"text","text":"hi"}]}`))
	f.Add([]byte(`{"content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"structuredContent":{"a":1}}`))
	f.Add([]byte(`{"content":[{"type":"resource","resource":{"uri":"file:///x","blob":"AAAA"}}],"isError":true}`))
	f.Add([]byte(`{"content":[{"type":"resource_link","uri":"file:///y","name":"y"}],"structuredContent":[1,2]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var res mcp.CallToolResult
		if json.Unmarshal(b, &res) != nil {
			return
		}
		out, files := resultOf(&res)
		if !utf8.ValidString(out) && utf8.Valid(b) {
			t.Fatalf("%q from %q", out, b)
		}
		for _, f := range files {
			if f.What == "" || strings.ContainsAny(f.Name, "/") {
				t.Fatalf("file %+v from %q", f, b)
			}
		}
	})
}

// A tool a server lists, whatever its bytes, is offered only if a bot's
// declaration of it would pass CheckSpecs (its name by the MCP rule).
func FuzzToolSpec(f *testing.F) {
	f.Add([]byte(`{"name":"echo","description":"Says it.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}`))
	f.Add([]byte(`{"name":"read.file","inputSchema":{"type":"string"}}`))
	f.Add([]byte(`{"name":"bad name","inputSchema":{}}`))
	f.Add([]byte(`{"name":"x","description":"\xff\xfe","inputSchema":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var tool mcp.Tool
		if json.Unmarshal(b, &tool) != nil {
			return
		}
		spec, why := specOf(&tool)
		if why != "" {
			return
		}
		if !tools.ValidMCPName(spec.Name) || tools.CheckSchema(spec) != nil || len(spec.Description) > tools.MaxDescriptionBytes ||
			!utf8.ValidString(spec.Description) {
			t.Fatalf("offered %+v from %q", spec, b)
		}
	})
}
