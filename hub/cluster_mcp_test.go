package hub

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"albedo/hub/mcphost"
	"albedo/hub/provider"
	"albedo/wire"
)

// whereServer is an MCP server over streamable HTTP whose one tool,
// where, says node.
func whereServer(t *testing.T, node string) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "where", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "where", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: node}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// In a cluster every node hosts its own MCP servers, from its own
// config.toml, and a call runs on the node that runs its turn: two nodes
// each name a server "web" that says which node it is; a session whose
// turns node a runs gets a's answer, one whose turns node b runs gets b's.
func TestEachNodeHostsItsOwnMCPServers(t *testing.T) {
	t.Parallel()
	reg, _ := provider.NewRegistry(provider.Config{}, nil)
	reg.Register("caller", callingProvider{api: "mcp__web__where"})
	a, b := memoryPair(t, false, func(node string) Options {
		web := whereServer(t, node)
		host := mcphost.New(slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
		t.Cleanup(host.Close) // before the server's: its stream would hold it
		if err := host.Reload(map[string]mcphost.ServerConfig{"web": {URL: web}}); err != nil {
			t.Fatal(err)
		}
		return Options{Providers: reg, MCP: host}
	})
	ctx := context.Background()
	// Each session's turns run where the other node drains.
	for _, c := range []struct {
		session   string
		runs, not *Hub
		want      string
	}{{"sa", a, b, "the tool said a"}, {"sb", b, a, "the tool said b"}} {
		c.not.draining.Store(true)
		c.runs.draining.Store(false)
		s, _, err := c.runs.CreateSession(ctx, c.session, wire.SessionCreate{Provider: "caller"})
		if err != nil {
			t.Fatal(err)
		}
		w := newReader(t, c.runs.Connect(ConnInfo{Name: "owner", Role: wire.TokenOwner, AuthorID: "owner"}))
		zero := int64(0)
		subscribe(w.c, wire.Sub{Session: c.session, After: &zero, Epoch: s.Epoch})
		if _, err := c.runs.PutInput(ctx, c.session, "0190a8a0-0000-7000-8000-000000000001", "where?", wire.Author{Name: "ann"}); err != nil {
			t.Fatal(err)
		}
		reply := w.next(t, func(f wire.Frame) bool {
			return f.Op == wire.PushEvent && f.Event.Type == wire.EventMessage && f.Event.Role == wire.RoleAssistant
		})
		if reply.Event.Text != c.want {
			t.Fatalf("%s: %q, want %q", c.session, reply.Event.Text, c.want)
		}
	}
}
