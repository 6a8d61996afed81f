package mcphost

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain runs the test binary as an MCP server on stdio when
// MCPHOST_TEST_SERVER says which (the tests start it as a server's
// command), else the tests.
func TestMain(m *testing.M) {
	switch os.Getenv("MCPHOST_TEST_SERVER") {
	case "":
		os.Exit(m.Run())
	case "go":
		if err := testServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "silent": // never answers initialize
		fmt.Fprintln(os.Stderr, "listening, saying nothing")
		time.Sleep(time.Hour)
	case "garbage": // answers with what is no JSON-RPC
		fmt.Println("hello, this is not JSON-RPC")
		fmt.Fprintln(os.Stderr, "wrote garbage")
		time.Sleep(time.Hour)
	case "exit":
		fmt.Fprintln(os.Stderr, "cannot start: no such database")
		os.Exit(3)
	}
}

type textIn struct {
	Text string `json:"text"`
}

type sizeIn struct {
	Bytes int `json:"bytes"`
}

type noIn struct{}

// testServer is a server with a tool for each case the host meets.
func testServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	text := func(t string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: t}}}
	}
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Says the text back.", Annotations: readOnly},
		func(_ context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			return text("echo: " + in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write", Description: "Writes (it says so)."},
		func(_ context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			return text("wrote " + in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "picture", Annotations: readOnly},
		func(context.Context, *mcp.CallToolRequest, noIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a dot:"},
				&mcp.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG fake")}}}, nil, nil
		})
	type weather struct {
		City string  `json:"city"`
		Temp float64 `json:"temp"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "structured", Annotations: readOnly},
		func(context.Context, *mcp.CallToolRequest, noIn) (*mcp.CallToolResult, weather, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "see the data"}}}, weather{City: "Oslo", Temp: -4}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail"},
		func(context.Context, *mcp.CallToolRequest, noIn) (*mcp.CallToolResult, any, error) {
			return nil, nil, fmt.Errorf("the disk is full")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash"},
		func(context.Context, *mcp.CallToolRequest, noIn) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "crashing on purpose")
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Annotations: readOnly},
		func(_ context.Context, _ *mcp.CallToolRequest, in sizeIn) (*mcp.CallToolResult, any, error) {
			return text(strings.Repeat("x", in.Bytes)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Annotations: readOnly},
		func(context.Context, *mcp.CallToolRequest, noIn) (*mcp.CallToolResult, any, error) {
			return text(strings.Join(os.Environ(), "\n")), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ noIn) (*mcp.CallToolResult, any, error) {
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Adds a tool, which the server says."},
		func(context.Context, *mcp.CallToolRequest, noIn) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "grown", Annotations: readOnly},
				func(context.Context, *mcp.CallToolRequest, noIn) (*mcp.CallToolResult, any, error) {
					return text("I am new"), nil, nil
				})
			return text("grew"), nil, nil
		})
	// Names the daemon cannot offer: listed, and left out with a note.
	s.AddTool(&mcp.Tool{Name: "bad name!", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("?"), nil })
	s.AddTool(&mcp.Tool{Name: strings.Repeat("long", 20), InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("?"), nil })
	return s
}
