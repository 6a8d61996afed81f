package mcphost

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Result is what a call returned: the text the model is told, why the
// call failed ("" if it did not), and the files its result carried.
type Result struct {
	Output, Error string
	Files         []File
}

// File is a piece of a result that is not text: an image, audio, or a
// resource's bytes, which the daemon keeps as a blob.
type File struct {
	What string // what it is, in words: "an image", "the resource <URI>"
	Name string // the name its resource's URI gives it, or ""
	MIME string // the type the server said
	Data []byte
}

// Call runs tool of the server called name with args (a JSON object),
// starting the server if it does not run. A call that ctx ends returns
// nothing: the turn runner says it timed out or was cancelled.
func (h *Host) Call(ctx context.Context, name, tool string, args json.RawMessage) Result {
	failed := func(format string, a ...any) Result { return Result{Error: fmt.Sprintf(format, a...)} }
	s := h.server(name)
	if s == nil {
		return failed("no MCP server %s is configured now", name)
	}
	sess, err := s.session(ctx)
	if ctx.Err() != nil {
		return Result{}
	}
	if err != nil {
		return Result{Error: err.Error()}
	}
	s.begin()
	defer s.end()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	var rpc *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		return Result{}
	case errors.As(err, &rpc):
		return failed("MCP server %s refused the call: %s", name, rpc.Message)
	case err != nil && !alive(s.host.ctx, sess, err):
		s.drop(sess, err)
		return failed("MCP server %s ended during the call (it starts again for the next): %v", name, err)
	case err != nil:
		return failed("MCP server %s: %v", name, err)
	}
	out, files := resultOf(res)
	if res.IsError {
		return Result{Error: cmp.Or(out, "the tool failed, saying nothing")}
	}
	return Result{Output: out, Files: files}
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

// resultOf is a tool's result as the model is told it, and the files it
// carries: each text as it is; what is not text (an image, audio, a
// resource's bytes) as a file, which the turn runner keeps and names; a
// link to a resource as its name and URI; and the structured content as
// JSON text, unless a text already says it.
func resultOf(res *mcp.CallToolResult) (string, []File) {
	var parts []string
	var files []File
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			files = append(files, File{What: "an image", MIME: c.MIMEType, Data: c.Data})
		case *mcp.AudioContent:
			files = append(files, File{What: "audio", MIME: c.MIMEType, Data: c.Data})
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[a resource: %s <%s>]", cmp.Or(c.Title, c.Name), c.URI))
		case *mcp.EmbeddedResource:
			switch r := c.Resource; {
			case r == nil:
			case r.Text != "":
				parts = append(parts, fmt.Sprintf("[the resource <%s>]\n%s", r.URI, r.Text))
			default:
				files = append(files, File{What: "the resource <" + r.URI + ">", Name: uriName(r.URI), MIME: r.MIMEType, Data: r.Blob})
			}
		}
	}
	if res.StructuredContent != nil {
		js, err := json.Marshal(res.StructuredContent)
		if err == nil && !saysJSON(parts, js) {
			parts = append(parts, string(js))
		}
	}
	return strings.Join(parts, "\n"), files
}

// uriName is the last element of a resource's URI, as a file's name.
func uriName(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Path == "" {
		return ""
	}
	if name := path.Base(u.Path); name != "/" && name != "." {
		return name
	}
	return "" // a root ("A:/"): no name of its own
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
