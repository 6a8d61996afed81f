package mcphost

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Call runs tool of the server called name with args (a JSON object),
// starting the server if it does not run; it returns the output and, for
// a call that failed, why. A call that ctx ends returns neither: the turn
// runner says it timed out or was cancelled.
func (h *Host) Call(ctx context.Context, name, tool string, args json.RawMessage) (string, string) {
	s := h.server(name)
	if s == nil {
		return "", fmt.Sprintf("no MCP server %s is configured now", name)
	}
	sess, err := s.session(ctx)
	if ctx.Err() != nil {
		return "", ""
	}
	if err != nil {
		return "", err.Error()
	}
	s.begin()
	defer s.end()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	var rpc *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		return "", ""
	case errors.As(err, &rpc):
		return "", fmt.Sprintf("MCP server %s refused the call: %s", name, rpc.Message)
	case err != nil && !alive(s.host.ctx, sess, err):
		s.drop(sess, err)
		return "", fmt.Sprintf("MCP server %s ended during the call (it starts again for the next): %v", name, err)
	case err != nil:
		return "", fmt.Sprintf("MCP server %s: %v", name, err)
	}
	out := resultText(res)
	if res.IsError {
		return "", cmp.Or(out, "the tool failed, saying nothing")
	}
	return out, ""
}

// alive says whether sess still answers after a call failed with err:
// a program that died, or a message past the SDK's frame limit, ends
// the session, and the next call must start the server again.
func alive(ctx context.Context, sess *mcp.ClientSession, err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	return sess.Ping(ctx, nil) == nil
}

// pingTimeout bounds the ping that tells a failed call's server alive.
const pingTimeout = 2 * time.Second

// resultText is a tool's result as the model is told it: each text as
// it is; what is not text (an image, audio, a resource's bytes) as a
// note that says what was left out, since the daemon keeps no files
// yet; a link to a resource as its name and URI; and the structured
// content as JSON text, unless a text already says it.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, leftOut("an image", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, leftOut("audio", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[a resource: %s <%s>]", cmp.Or(c.Title, c.Name), c.URI))
		case *mcp.EmbeddedResource:
			switch r := c.Resource; {
			case r == nil:
			case r.Text != "":
				parts = append(parts, fmt.Sprintf("[the resource <%s>]\n%s", r.URI, r.Text))
			default:
				parts = append(parts, leftOut("the resource <"+r.URI+">", r.MIMEType, len(r.Blob)))
			}
		}
	}
	if res.StructuredContent != nil {
		js, err := json.Marshal(res.StructuredContent)
		if err == nil && !saysJSON(parts, js) {
			parts = append(parts, string(js))
		}
	}
	return strings.Join(parts, "\n")
}

// leftOut notes content the daemon does not pass on.
func leftOut(what, mime string, size int) string {
	return fmt.Sprintf("[%s (%s, %d bytes) was left out: albedo does not keep files from tools yet]", what, cmp.Or(mime, "of no stated type"), size)
}

// saysJSON says whether one of parts is the JSON value js, whatever its
// spacing (servers repeat their structured content as text).
func saysJSON(parts []string, js []byte) bool {
	var want bytes.Buffer
	if json.Compact(&want, js) != nil {
		return false
	}
	for _, p := range parts {
		var got bytes.Buffer
		if json.Compact(&got, []byte(p)) == nil && bytes.Equal(got.Bytes(), want.Bytes()) {
			return true
		}
	}
	return false
}
