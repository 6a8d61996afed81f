//go:build !e2e_only || e2e_web

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// opencodeProfile is config.toml's [providers.opencode]: the real
// opencode from npm (`opencode acp`), in a home of its own, reaching no
// network (its update check, models list and sharing off), its model
// the fake OpenAI-compatible server at url, its edits asking first.
func opencodeProfile(t *testing.T, bin, url string) string {
	t.Helper()
	home := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{
		"autoupdate": false, "share": "disabled",
		"model": "fake/fake-model", "small_model": "fake/fake-model", "enabled_providers": []string{"fake"},
		"provider": map[string]any{"fake": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Fake",
			"options": map[string]any{"baseURL": url, "apiKey": "dummy-key"},
			"models":  map[string]any{"fake-model": map[string]any{"name": "Fake Model", "tool_call": true}},
		}},
		"permission": map[string]any{"edit": "ask", "bash": "ask"},
	})
	env := map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": home + "/config", "XDG_DATA_HOME": home + "/data", "XDG_STATE_HOME": home + "/state",
		"XDG_CACHE_HOME": home + "/cache", "OPENCODE_CONFIG_CONTENT": string(cfg),
	}
	for _, k := range []string{"AUTOUPDATE", "MODELS_FETCH", "SHARE", "LSP_DOWNLOAD", "DEFAULT_PLUGINS", "CLAUDE_CODE", "EXTERNAL_SKILLS"} {
		env["OPENCODE_DISABLE_"+k] = "1"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[providers.opencode]\nkind = \"acp\"\ncommand = [%q, \"acp\"]\nstart_timeout = \"150s\"\n", bin)
	b.WriteString("[providers.opencode.env]\n")
	for k, v := range env {
		fmt.Fprintf(&b, "%s = %q\n", k, v)
	}
	return b.String()
}

// The real opencode, from npm, as a session's coding agent, driven by the
// fake OpenAI-compatible model: its reply streams to the page; the file
// it writes waits for an approval, given on the page, and then lands in
// the workspace; each step is in the log.
func TestOpencodeWritesAFileAfterAnApprovalFromThePage(t *testing.T) {
	// opencode's start keeps a core busy for seconds (tens, in a fresh
	// home): heavy, and let in early, so that it neither starves the
	// tests beside it nor runs alone at the end.
	parallelLongHeavy(t)
	bin := opencodeBin(t)
	home := t.TempDir()
	f, err := fakeopenai.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(opencodeProfile(t, bin, f.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, home)
	// A daemon stopped in order stops opencode, which otherwise, orphaned
	// by the kill that ends every test's daemon, may still be writing its
	// caches in its home when that home is removed.
	t.Cleanup(d.stop)
	c := newClient(t, home)
	// opencode's first start in a fresh home takes seconds (tens, on a
	// loaded machine): the test's budget is longer than ctxT's.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := c.CreateSession(ctx, "k", wire.SessionCreate{Title: "opencode", Provider: "opencode", Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(ws, "hello.txt")
	args, _ := json.Marshal(map[string]string{"filePath": target, "content": "hello from opencode\n"})
	f.Push(fakeopenai.Reply{WithTools: true, ToolCalls: []fakeopenai.ToolCall{{ID: "call_1", Name: "write", Arguments: string(args)}}},
		fakeopenai.Reply{WithTools: true, Chunks: []string{"I wrote ", "hello.txt."}})

	b := startBrowser(t)
	p := b.open(ownerLink(t, home, "k"))
	p.waitOpen("opencode")
	r, err := c.PutInput(ctx, "k", uuid.NewString(), "write hello.txt")
	if err != nil {
		t.Fatal(err)
	}
	p.waitWithin("opencode's write, waiting for a decision", `!!document.querySelector('.tool[data-state=pending] .tool-decide button[data-decision=allow]')`, 3*time.Minute)
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the file was written before the approval")
	}
	p.click(`.tool[data-state=pending] .tool-decide button[data-decision=allow]`)
	p.waitWithin("the reply", shownCommitted("I wrote hello.txt."), time.Minute)
	if b, err := os.ReadFile(target); err != nil || string(b) != "hello from opencode\n" {
		t.Fatalf("hello.txt: %q %v\n%s", b, err, d.logText())
	}
	var kinds []string
	for _, ev := range events(t, ctx, c, "k") {
		if ev.TurnID != r.TurnID {
			continue
		}
		k := string(ev.Type)
		if ev.Tool != "" {
			k += ":" + ev.Tool
		}
		kinds = append(kinds, k)
	}
	got := strings.Join(kinds, " ")
	for _, want := range []string{"tool_call:acp:edit", "approval", "tool_result", "message", "turn"} {
		if !strings.Contains(got, want) {
			t.Fatalf("the turn's events lack %s: %s", want, got)
		}
	}
	// The model was sent opencode's tools, and then the result of its
	// write (beside them, opencode asks for a title without tools).
	var last fakeopenai.Request
	for _, r := range f.Requests() {
		if len(r.Tools) > 0 {
			last = r
		}
	}
	if len(last.Messages) == 0 || !strings.Contains(string(last.Messages[len(last.Messages)-1]), "call_1") {
		t.Fatalf("the model's last request with tools: %+v", last)
	}
}
