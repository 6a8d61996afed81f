//go:build !e2e_only || e2e_core

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"albedo/client"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// mcpClient connects the SDK's client to `albedo mcp` on home, with
// args (--token …), over stdio.
func mcpClient(t *testing.T, home string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(albedoBin, append([]string{"mcp", "--home", home}, args...)...)
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callJSON calls a tool of albedo's MCP server and decodes its answer;
// a tool's error comes back as its text.
func callJSON(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, out any) string {
	t.Helper()
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		return text
	}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		t.Fatalf("%s: %v: %s", tool, err, text)
	}
	return ""
}

// An agent uses albedo through `albedo mcp`, with the SDK's client over
// stdio: the four tools, annotated (the reads read-only); it lists the
// sessions, reads one by title, sends a message and gets the model's
// reply. A viewer's token reads and cannot send;
// a session that does not exist is a clear error. The daemon serves the
// same tools at /v1/mcp, over streamable HTTP.
func TestAnAgentUsesAlbedoOverMCP(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "k", create: wire.SessionCreate{Title: "plans", Provider: "fake"}})
	cs := mcpClient(t, fx.home)
	tools, err := cs.ListTools(fx.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	hints := map[string]bool{}
	for _, tl := range tools.Tools {
		hints[tl.Name] = tl.Annotations != nil && tl.Annotations.ReadOnlyHint
	}
	if len(hints) != 4 || !hints["list_sessions"] || !hints["read_session"] || hints["send_message"] || hints["ask_people"] {
		t.Fatalf("tools: %v", hints)
	}

	var list struct {
		Sessions []struct{ ID, Title string }
	}
	callJSON(t, cs, "list_sessions", nil, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ID != "k" || list.Sessions[0].Title != "plans" {
		t.Fatalf("list_sessions: %+v", list)
	}

	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"Ship ", "on Friday."}})
	var sent struct {
		State, Reply, Author string
	}
	callJSON(t, cs, "send_message", map[string]any{"session": "plans", "text": "when do we ship?"}, &sent)
	if sent.State != wire.TurnCompleted || sent.Reply != "Ship on Friday." || sent.Author != "fake-model" {
		t.Fatalf("send_message: %+v", sent)
	}
	var read struct {
		Title    string
		Messages []struct {
			Author, Role, Text string
		}
	}
	callJSON(t, cs, "read_session", map[string]any{"session": "plans", "last": 2}, &read)
	if read.Title != "plans" || len(read.Messages) != 2 || read.Messages[0].Text != "when do we ship?" || read.Messages[1].Text != "Ship on Friday." {
		t.Fatalf("read_session: %+v", read)
	}

	// The daemon serves the same at /v1/mcp, with a bearer token.
	info, err := client.ReadDaemonFile(fx.home)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: bearer(info.Token)}
	remote, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(fx.ctx,
		&mcp.StreamableClientTransport{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/v1/mcp", info.Port), HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	callJSON(t, remote, "list_sessions", nil, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].Title != "plans" {
		t.Fatalf("list_sessions over HTTP: %+v", list)
	}

	if msg := callJSON(t, cs, "read_session", map[string]any{"session": "no-such-session"}, nil); !strings.Contains(msg, "not_found") && !strings.Contains(msg, "no session") {
		t.Fatalf("a session that does not exist: %q", msg)
	}
	viewer := mcpClient(t, fx.home, "--token", strings.TrimSpace(lastLine(cli(t, fx.home, "share", "--token", "k"))))
	callJSON(t, viewer, "read_session", map[string]any{"session": "k"}, &read)
	if len(read.Messages) == 0 {
		t.Fatal("the viewer read nothing")
	}
	if msg := callJSON(t, viewer, "send_message", map[string]any{"session": "k", "text": "hi", "wait": false}, nil); !strings.Contains(msg, "forbidden") {
		t.Fatalf("a viewer sent: %q", msg)
	}
}

// bearer is an http.RoundTripper that sets a token on every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// ask_people through `albedo mcp`: the agent asks the session's people,
// and a member granted write answers from her own client.
func TestAnAgentAsksPeopleOverMCP(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "k", create: wire.SessionCreate{Title: "plans", Provider: "fake"}})
	cs := mcpClient(t, fx.home)
	annToken, _ := writer(t, fx.home, "ann", "k")
	ann, err := client.New(client.Options{Home: fx.home, Token: annToken})
	if err != nil {
		t.Fatal(err)
	}
	// Shared, the session would answer mentions only: here its model
	// answers every message, the question too.
	s, err := fx.c.Session(fx.ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	always := wire.RespondAlways
	if _, err := fx.c.PatchSession(fx.ctx, "k", s.ETag, wire.SessionPatch{Respond: &always}); err != nil {
		t.Fatal(err)
	}
	st := ann.Stream(client.StreamOptions{})
	defer st.Close()
	sub := st.Subscribe("k", client.Cursor{})
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"(the model's own thought)"}})
	asked := make(chan string, 1)
	go func() {
		var got struct {
			Answered bool
			Answer   struct{ Author, Text string }
		}
		if msg := callJSON(t, cs, "ask_people", map[string]any{"session": "k", "question": "may I deploy?", "timeout_seconds": 60}, &got); msg != "" {
			asked <- "error: " + msg
			return
		}
		asked <- got.Answer.Author + ": " + got.Answer.Text
	}()
	for {
		it, err := sub.Next(fx.ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The model answers the question first: its reply, which carries
		// the question's input_id, is no person's answer.
		if it.Op == wire.PushEvent && it.Event.Type == wire.EventMessage && it.Event.Role == wire.RoleAssistant {
			break
		}
	}
	if _, err := ann.PutInput(fx.ctx, "k", uuid.NewString(), "yes, go ahead"); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-asked:
		if got != "ann: yes, go ahead" {
			t.Fatalf("ask_people answered %q", got)
		}
	case <-fx.ctx.Done():
		t.Fatal("ask_people never answered")
	}

}
