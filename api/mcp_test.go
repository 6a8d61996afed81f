package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"albedo/mcpserve"
	"albedo/wire"
)

// mcpEnv is the stack with /v1/mcp served (mcpserve.HTTP), as the
// daemon serves it.
func mcpEnv(t *testing.T) *env {
	h := mcpserve.NewHTTP("test")
	e := newEnv(t, Options{MCP: h})
	h.Serve(e.srv.Handler())
	t.Cleanup(h.Close)
	return e
}

// bearerRT sets a token on every request.
type bearerRT string

func (t bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(t))
	return http.DefaultTransport.RoundTrip(r)
}

// mcpOver connects the SDK's client to /v1/mcp with token.
func (e *env) mcpOver(token string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(e.t.Context(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.url + "/v1/mcp", HTTPClient: &http.Client{Transport: bearerRT(token)}}, nil)
	if err == nil {
		e.t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// toolText calls a tool and returns its text, and whether it failed.
func toolText(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// albedo's MCP server over streamable HTTP at /v1/mcp, with the SDK's
// client: with the owner's token it lists, reads, and sends a message
// and gets the turn's reply (echo's); a viewer's token reads and cannot
// send; a request without a valid token is 401 before MCP.
func TestAlbedoIsAnMCPServerOverHTTP(t *testing.T) {
	t.Parallel()
	e := mcpEnv(t)
	e.create("s")
	cs, err := e.mcpOver(testToken)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) != 4 {
		t.Fatalf("tools: %v %v", tools, err)
	}
	text, failed := toolText(t, cs, "send_message", map[string]any{"session": "s", "text": "ping"})
	var sent struct{ State, Reply string }
	if failed || json.Unmarshal([]byte(text), &sent) != nil || sent.State != "completed" || !strings.Contains(sent.Reply, "ping") {
		t.Fatalf("send_message: %s", text)
	}
	text, failed = toolText(t, cs, "read_session", map[string]any{"session": "s"})
	var read struct {
		Messages []struct{ Text string }
	}
	if failed || json.Unmarshal([]byte(text), &read) != nil || len(read.Messages) != 2 || read.Messages[0].Text != "ping" {
		t.Fatalf("read_session: %s", text)
	}
	if text, failed := toolText(t, cs, "list_sessions", nil); failed || !strings.Contains(text, `"id":"s"`) {
		t.Fatalf("list_sessions: %s", text)
	}

	viewer, err := e.mcpOver(e.viewerToken("s"))
	if err != nil {
		t.Fatal(err)
	}
	if text, failed := toolText(t, viewer, "read_session", map[string]any{"session": "s"}); failed || !strings.Contains(text, "ping") {
		t.Fatalf("the viewer's read: %s", text)
	}
	if text, failed := toolText(t, viewer, "send_message", map[string]any{"session": "s", "text": "hi", "wait": false}); !failed || !strings.Contains(text, "forbidden") {
		t.Fatalf("the viewer's send: %v %s", failed, text)
	}
	if _, err := e.mcpOver("alown_wrong"); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("a wrong token: %v", err)
	}
}

// ask_people over /v1/mcp with a bot's token: its question is a post,
// which starts no turn, and the answer is the next message a person
// writes, a member's here; a session the token may not read is
// forbidden, a name that is no session's not_found.
func TestAskPeopleOverHTTP(t *testing.T) {
	t.Parallel()
	e := mcpEnv(t)
	s := e.create("s")
	ann := e.member("ann", false)
	e.grant("s", "ann", wire.AccessWrite)
	cs, err := e.mcpOver(e.botToken("asker", "s"))
	if err != nil {
		t.Fatal(err)
	}
	w := e.dial(true).HelloFromStart(s)
	asked := make(chan string, 1)
	go func() {
		text, failed := toolText(t, cs, "ask_people", map[string]any{"session": "s", "question": "may I deploy?", "timeout_seconds": 30})
		if failed {
			text = "failed: " + text
		}
		asked <- text
	}()
	q := w.Next(func(f wire.Frame) bool { return f.Op == wire.PushEvent && f.Event.Text == "may I deploy?" })
	if q.Event.Role == wire.RoleUser || q.Event.TurnID != "" {
		t.Fatalf("the question: %+v", q.Event)
	}
	if code, _ := e.do("PUT", inputPath("s", 1), e.as(ann.Token), `{"text":"yes"}`, nil); code != 200 && code != 201 && code != 202 {
		t.Fatalf("ann's answer: %d", code)
	}
	var got struct {
		Answered bool
		Answer   struct{ Author, Text string }
	}
	if text := <-asked; json.Unmarshal([]byte(text), &got) != nil || !got.Answered || got.Answer.Author != "ann" || got.Answer.Text != "yes" {
		t.Fatalf("ask_people: %s", text)
	}
	e.create("other")
	if text, failed := toolText(t, cs, "read_session", map[string]any{"session": "other"}); !failed || !strings.Contains(text, "forbidden") {
		t.Fatalf("a session the bot may not see: %v %s", failed, text)
	}
	owner, err := e.mcpOver(testToken)
	if err != nil {
		t.Fatal(err)
	}
	if text, failed := toolText(t, owner, "read_session", map[string]any{"session": "no such title"}); !failed || !strings.Contains(text, "not_found") {
		t.Fatalf("a name that is no session's: %v %s", failed, text)
	}
}
