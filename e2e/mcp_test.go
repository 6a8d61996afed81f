//go:build !e2e_only || e2e_core

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// mcpConfig is config.toml's [mcp] tables for the reference servers:
// the filesystem server on dir, the everything server, and one that
// cannot start.
func mcpConfig(t *testing.T, dir string) string {
	return fmt.Sprintf("\n[mcp.fs]\ncommand = [\"node\", %q, %q]\n\n[mcp.everything]\ncommand = [\"node\", %q, \"stdio\"]\n\n[mcp.broken]\ncommand = [\"false\"]\n",
		mcpServer(t, "filesystem"), dir, mcpServer(t, "everything"))
}

// The MCP reference servers from npm, run by the daemon: a turn of the
// fake model calls the filesystem server's read_text_file and the
// everything server's get-tiny-image at once (both say they only read:
// they run without asking; the image is kept as a file the result
// carries, which the owner reads and the model is told the name of),
// then write_file, which asks; the owner allows it from the CLI, and the
// file is written in the allowed directory. A server that cannot start
// is named in GET /v1/tools and /readyz, and the daemon is still ready.
// An edit of config.toml that removes a server takes its tools away,
// live.
func TestAModelCallsTheMCPReferenceServers(t *testing.T) {
	parallel(t)
	home, dir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("buy milk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := mcpConfig(t, dir)
	f := withFakeAnd(t, home, cfg)
	startDaemon(t, home)
	c := newClient(t, home)
	ctx := ctxT(t)
	if _, err := c.CreateSession(ctx, "k", wire.SessionCreate{Title: "k", Provider: "fake"}); err != nil {
		t.Fatal(err)
	}
	waitTool(t, ctx, c, "k", "mcp:fs/write_file")
	waitTool(t, ctx, c, "k", "mcp:everything/get-tiny-image")
	ts, err := c.Tools(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	policy := map[string]string{}
	for _, x := range ts.Tools {
		policy[x.Name] = x.Policy
	}
	if policy["mcp:fs/read_text_file"] != "allow" || policy["mcp:fs/write_file"] != "ask" || policy["mcp:everything/echo"] != "allow" {
		t.Fatalf("policies from the servers' hints: %v", policy)
	}
	servers := map[string]wire.MCPServer{}
	for _, s := range ts.Servers {
		servers[s.Name] = s
	}
	if servers["fs"].State != "ready" || servers["everything"].State != "ready" || servers["broken"].State != "failed" ||
		!strings.Contains(servers["broken"].Error, "MCP server broken could not start") {
		t.Fatalf("servers: %+v", ts.Servers)
	}
	ready := readyz(t, home)
	if !ready.Ready || ready.Checks["mcp"] != "failing: broken" {
		t.Fatalf("/readyz: %+v", ready)
	}

	args := func(v map[string]string) string { b, _ := json.Marshal(v); return string(b) }
	out := filepath.Join(dir, "out.txt")
	f.Push(fakeopenai.Reply{Chunks: []string{"Reading."}, ToolCalls: []fakeopenai.ToolCall{
		{ID: "r", Name: "mcp__fs__read_text_file", Arguments: args(map[string]string{"path": filepath.Join(dir, "notes.txt")})},
		{ID: "i", Name: "mcp__everything__get-tiny-image", Arguments: `{}`}}},
		fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{ID: "w", Name: "mcp__fs__write_file", Arguments: args(map[string]string{"path": out, "content": "milk bought"})}}},
		fakeopenai.Reply{Chunks: []string{"Done."}})
	if _, err := c.PutInput(ctx, "k", uuid.NewString(), "read my notes, then write"); err != nil {
		t.Fatal(err)
	}
	if st, err := waitPhase(ctx, c, "k", wire.PhaseApproval); err != nil || st.Status.Pending != 1 {
		t.Fatalf("waiting for the write's decision: %+v %v", st.Status, err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the file exists before the decision: %v", err)
	}
	list := cliJSON(t, home, "approvals", "k")
	if len(list) != 1 || list[0]["tool"] != "mcp:fs/write_file" {
		t.Fatalf("approvals: %v", list)
	}
	cli(t, home, "approve", "k", list[0]["call_id"].(string))
	evs := waitTurnsClosed(t, ctx, c, "k", 1)
	results := map[string]wire.Event{}
	var calls []string
	for _, ev := range evs {
		switch ev.Type {
		case wire.EventToolCall:
			calls = append(calls, ev.Tool+":"+ev.Policy)
			results[ev.CallID] = wire.Event{Tool: ev.Tool}
		case wire.EventToolResult:
			r := results[ev.CallID]
			r.State, r.Text, r.Error, r.Attachments = ev.State, ev.Text, ev.Error, ev.Attachments
			results[ev.CallID] = r
		}
	}
	if strings.Join(calls, " ") != "mcp:fs/read_text_file:allow mcp:everything/get-tiny-image:allow mcp:fs/write_file:ask" {
		t.Fatalf("calls %v", calls)
	}
	for _, r := range results {
		ok := r.State == wire.ToolCompleted
		switch r.Tool {
		case "mcp:fs/read_text_file":
			ok = ok && strings.Contains(r.Text, "buy milk")
		case "mcp:everything/get-tiny-image":
			ok = ok && len(r.Attachments) == 1 && r.Attachments[0].MIME == "image/png" && r.Attachments[0].Name == "image-1.png"
			if ok {
				var png bytes.Buffer
				if _, err := c.GetBlob(ctx, r.Attachments[0].SHA256, &png); err != nil || !bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")) {
					t.Errorf("the image: %v, %q", err, png.Bytes())
				}
			}
		case "mcp:fs/write_file":
			ok = ok && strings.Contains(r.Text, "Successfully wrote")
		}
		if !ok {
			t.Errorf("%s: %+v", r.Tool, r)
		}
	}
	told := false
	for _, r := range f.Requests() {
		for _, m := range r.Messages {
			told = told || strings.Contains(string(m), `[file \"image-1.png\", image/png, `)
		}
	}
	if !told {
		t.Errorf("the model was not told the image's name")
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "milk bought" {
		t.Fatalf("the file written: %q %v", b, err)
	}

	// config.toml without the everything server: its tools go, live.
	edited := strings.Replace(cfg, fmt.Sprintf("\n[mcp.everything]\ncommand = [\"node\", %q, \"stdio\"]\n", mcpServer(t, "everything")), "", 1)
	withFakeAnd(t, home, edited) // rewrites config.toml, a new fake's profile first
	waitToolGone(t, home, c, "k", "mcp:everything/echo")
}

// waitToolGone waits until tool is no longer offered in session.
func waitToolGone(t *testing.T, home string, c *client.Client, session, tool string) {
	t.Helper()
	ctx := ctxT(t)
	for {
		ts, err := c.Tools(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, x := range ts.Tools {
			found = found || x.Name == tool
		}
		if !found {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s is still offered after config.toml's edit", tool)
		case <-time.After(50 * time.Millisecond): // config.toml is read every half second
		}
	}
}

// readyzState is /readyz's answer.
type readyzState struct {
	Ready  bool              `json:"ready"`
	Checks map[string]string `json:"checks"`
}

// readyz asks the home's daemon's /readyz.
func readyz(t *testing.T, home string) readyzState {
	t.Helper()
	info, err := client.ReadDaemonFile(home)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", info.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st readyzState
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}
