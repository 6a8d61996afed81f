package api

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"albedo/hub"
	"albedo/hub/acphost"
	"albedo/hub/acphost/fakeagent"
	"albedo/hub/mcphost"
	"albedo/hub/provider"
	"albedo/wire"
)

// agentEnv is a daemon whose profile coder is the fake coding agent
// (the test binary run again), and a workspace for it.
func agentEnv(t *testing.T, cfg provider.ToolsConfig) (*env, string) {
	t.Helper()
	host := acphost.New(nil, nil)
	t.Cleanup(host.Close) // after the hub closes: cleanups run last first
	reg, err := provider.NewRegistry(provider.Config{Tools: cfg, Providers: map[string]provider.Profile{
		"coder": {Kind: provider.KindACP, Command: []string{os.Args[0]}, Env: map[string]mcphost.Value{fakeagent.Env: {Text: "1"}, "GORACE": {Text: fakeagent.QuickExit[len("GORACE="):]}}},
	}}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return newEnvWith(t, Options{}, hub.Options{Providers: reg, Agents: host}), ws
}

// agentSession makes session id of the coding agent in ws.
func (e *env) agentSession(id, ws string) wire.Session {
	e.t.Helper()
	b, _ := json.Marshal(wire.SessionCreate{Provider: "coder", Workspace: ws})
	var s wire.Session
	if code, _ := e.do("PUT", "/v1/sessions/"+id, map[string]string{"If-None-Match": "*"}, string(b), &s); code != http.StatusCreated {
		e.t.Fatalf("create the agent's session: %d", code)
	}
	return s
}

// Only an admin makes a coding agent's session, in a workspace that is a
// directory; only an admin changes one.
func TestOnlyAdminsMakeAgentSessionsInAWorkspace(t *testing.T) {
	t.Parallel()
	e, ws := agentEnv(t, provider.ToolsConfig{})
	bob := e.member("bob", false)
	ann := e.member("ann", true)
	body := func(w string) string {
		b, _ := json.Marshal(wire.SessionCreate{Provider: "coder", Workspace: w})
		return string(b)
	}
	var eb wire.ErrorBody
	if code, _ := e.do("POST", "/v1/sessions", e.as(bob.Token), body(ws), &eb); code != 403 || !strings.Contains(eb.Error.Message, "only an admin") {
		t.Fatalf("a member made an agent's session: %d %+v", code, eb.Error)
	}
	for _, w := range []string{"", "relative/dir", filepath.Join(ws, "missing")} {
		if code, _ := e.do("POST", "/v1/sessions", e.as(ann.Token), body(w), &eb); code != 400 || !strings.Contains(eb.Error.Message, "workspace") {
			t.Fatalf("workspace %q: %d %+v", w, code, eb.Error)
		}
	}
	var s wire.Session
	if code, _ := e.do("POST", "/v1/sessions", e.as(ann.Token), body(ws), &s); code != 201 || s.Workspace != ws {
		t.Fatalf("an admin's: %d %+v", code, s)
	}
	e.grant(s.ID, "bob", wire.AccessWrite)
	if code, _ := e.do("PATCH", "/v1/sessions/"+s.ID, map[string]string{"If-Match": s.ETag, "Authorization": "Bearer " + bob.Token}, `{"title":"x"}`, &eb); code != 403 {
		t.Fatalf("a member changed an agent's session: %d", code)
	}
	if code, _ := e.do("POST", "/v1/sessions/"+s.ID+"/fork", e.as(bob.Token), `{"at":0}`, &eb); code != 403 {
		t.Fatalf("a member forked an agent's session: %d %+v", code, eb.Error)
	}
}

// The whole of an agent's edit: it asks, the session waits in phase
// approval with the call listed (acp:edit, with its diff and files); a
// person allows it; the agent is answered allow_once, which a notice
// says; the daemon's write for it is a call of its own with its diff;
// the file changes; the reply is the agent's. Its plan and thinking are
// the session's status.
func TestAnAgentsEditIsApprovedAndLands(t *testing.T) {
	t.Parallel()
	e, ws := agentEnv(t, provider.ToolsConfig{})
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := e.dial(true).HelloFromStart(e.agentSession("s", ws))

	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"hello"}`, &r)
	plan := w.Next(func(f wire.Frame) bool {
		return f.Op == wire.PushStatus && f.Status.Agent != nil && len(f.Status.Agent.Plan) == 2
	})
	if plan.Status.Agent.Plan[0].Content != "say hello" {
		t.Fatalf("plan %+v", plan.Status.Agent)
	}
	if text := replyOf(w, r.TurnID); text != "Hello from the agent." {
		t.Fatalf("reply %q", text)
	}

	e.do("PUT", inputPath("s", 2), nil, `{"text":"edit a.txt new words"}`, &r)
	ap := e.waitApproval(w, "s", 1)[0]
	if ap.Tool != "acp:edit" || ap.TurnID != r.TurnID {
		t.Fatalf("approval %+v", ap)
	}
	var dec wire.Event
	if code, _ := e.do("POST", "/v1/sessions/s/approvals/"+ap.CallID, nil, `{"decision":"allow"}`, &dec); code != 200 {
		t.Fatalf("decide: %d", code)
	}
	if text := replyOf(w, r.TurnID); text != "edited a.txt" {
		t.Fatalf("reply %q", text)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "new words\n" {
		t.Fatalf("a.txt holds %q", b)
	}
	var got []string
	var edit, write, end wire.Event
	for _, ev := range e.events("s") {
		if ev.TurnID != r.TurnID {
			continue
		}
		got = append(got, string(ev.Type)+":"+ev.Tool)
		switch {
		case ev.Type == wire.EventToolCall && ev.Tool == "acp:edit":
			edit = ev
		case ev.Type == wire.EventToolCall && ev.Tool == "acp:fs_write":
			write = ev
		case ev.Type == wire.EventTurn:
			end = ev
		}
	}
	want := "message: turn: tool_call:acp:edit approval: notice: tool_call:acp:fs_write tool_result: tool_result: message: turn:"
	if strings.Join(got, " ") != want {
		t.Fatalf("events %v", got)
	}
	if edit.Policy != wire.PolicyAsk || edit.Title == nil || *edit.Title != "Edit a.txt" || len(edit.Locations) != 1 ||
		!strings.Contains(edit.Diff, "-old") || edit.Author != "coder" {
		t.Fatalf("edit %+v", edit)
	}
	if write.Policy != wire.PolicyAllow || !strings.Contains(write.Diff, "+new words") {
		t.Fatalf("write %+v", write)
	}
	var u wire.Usage
	if end.State != wire.TurnCompleted || json.Unmarshal(end.Usage, &u) != nil || u.InputTokens != 10 || u.OutputTokens != 5 {
		t.Fatalf("end %+v", end)
	}
}

// A rule may decide an agent's permission request without asking.
func TestARuleDeniesAnAgentsEdit(t *testing.T) {
	t.Parallel()
	e, ws := agentEnv(t, provider.ToolsConfig{Rules: []provider.ToolRule{{Match: "acp:edit", Policy: "deny"}}})
	w := e.dial(true).HelloFromStart(e.agentSession("s", ws))
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"edit b.txt x"}`, &r)
	if text := replyOf(w, r.TurnID); text != "I was not allowed to edit b.txt" {
		t.Fatalf("reply %q", text)
	}
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); err == nil {
		t.Fatal("b.txt was written")
	}
	var call, res wire.Event
	for _, ev := range e.events("s") {
		switch ev.Type {
		case wire.EventToolCall:
			call = ev
		case wire.EventToolResult:
			res = ev
		}
	}
	if call.Policy != wire.PolicyDeny || res.State != wire.ToolDenied {
		t.Fatalf("call %+v result %+v", call, res)
	}
}

// A command the agent runs through the daemon streams its output to
// viewers in the session's status while it runs; an interrupt sends the
// agent session/cancel, kills the command, and ends both its call and
// the turn.
func TestAnAgentsCommandStreamsAndAnInterruptKillsIt(t *testing.T) {
	t.Parallel()
	e, ws := agentEnv(t, provider.ToolsConfig{})
	// The command's own pause is its work, not the test's: it runs until killed.
	if err := os.WriteFile(filepath.Join(ws, "slow.sh"), []byte("echo started\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := e.dial(true).HelloFromStart(e.agentSession("s", ws))
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"run sh slow.sh"}`, &r)
	out := w.Next(func(f wire.Frame) bool {
		return f.Op == wire.PushStatus && f.Status.Agent != nil && f.Status.Agent.Output != nil && strings.Contains(f.Status.Agent.Output.Text, "started")
	})
	call := out.Status.Agent.Output.CallID
	if code, _ := e.do("POST", "/v1/sessions/s/interrupt", nil, "", nil); code != 200 {
		t.Fatalf("interrupt: %d", code)
	}
	streamed(w, r.TurnID, "")
	var res, end wire.Event
	for _, ev := range e.events("s") {
		switch {
		case ev.Type == wire.EventToolResult && ev.CallID == call:
			res = ev
		case ev.Type == wire.EventTurn && ev.State != wire.TurnStarted:
			end = ev
		}
	}
	if res.State != wire.ToolFailed || !strings.Contains(res.Error, "killed") || !strings.Contains(res.Text, "started") {
		t.Fatalf("the command's result %+v", res)
	}
	if end.State != wire.TurnInterrupted {
		t.Fatalf("the turn's end %+v", end)
	}
}

// Two people decide an agent's request at once: one decision wins, the
// other is a conflict, and the agent is answered once.
func TestTwoPeopleDecideAnAgentsRequestAtOnce(t *testing.T) {
	t.Parallel()
	e, ws := agentEnv(t, provider.ToolsConfig{})
	w := e.dial(true).HelloFromStart(e.agentSession("s", ws))
	ann, bob := e.member("ann", false), e.member("bob", false)
	e.grant("s", "ann", wire.AccessWrite)
	e.grant("s", "bob", wire.AccessWrite)
	e.answerAll("s")
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"edit c.txt both"}`, &r)
	ap := e.waitApproval(w, "s", 1)[0]
	codes := make(chan int, 2)
	for _, p := range []struct{ token, decision string }{{ann.Token, "allow"}, {bob.Token, "deny"}} {
		go func() {
			code, _ := e.do("POST", "/v1/sessions/s/approvals/"+ap.CallID, e.as(p.token), `{"decision":"`+p.decision+`"}`, nil)
			codes <- code
		}()
	}
	a, b := <-codes, <-codes
	if a+b != 200+409 {
		t.Fatalf("decisions answered %d and %d", a, b)
	}
	streamed(w, r.TurnID, "")
	approvals, notices := 0, 0
	for _, ev := range e.events("s") {
		switch ev.Type {
		case wire.EventApproval:
			approvals++
		case wire.EventNotice:
			notices++
		}
	}
	if approvals != 1 || notices != 1 {
		t.Fatalf("%d approvals, %d notices", approvals, notices)
	}
}

// An agent's piece past the reply's limit fails the turn saying so; a
// line past what the SDK reads (10 MiB) closes the connection, and the
// turn fails saying that; the next turn starts the agent again.
func TestAnAgentsHugePiecesAreBounded(t *testing.T) {
	t.Parallel()
	e, ws := agentEnv(t, provider.ToolsConfig{})
	w := e.dial(true).HelloFromStart(e.agentSession("s", ws))
	w.Wait = time.Minute // 11 MB through the agent, the SDK and -race, on a loaded machine
	for i, c := range []struct{ input, want string }{
		{"huge 2000000", "passed the limit"},
		{"huge 11000000", "sent more at once than the daemon takes"},
		{"hello", ""},
	} {
		if testing.Short() && strings.HasPrefix(c.input, "huge 11") {
			continue // 11 MB through the race detector: the full suite's
		}
		var r wire.Receipt
		e.do("PUT", inputPath("s", i+1), nil, `{"text":"`+c.input+`"}`, &r)
		_, evs := streamed(w, r.TurnID, "")
		end := evs[len(evs)-1]
		if c.want == "" && end.State != wire.TurnCompleted || c.want != "" && (end.State != wire.TurnFailed || !strings.Contains(end.Error, c.want)) {
			t.Fatalf("%s: %+v", c.input, end)
		}
	}
}

// An agent that says its call runs before it asks permission for it (as
// opencode does): the call, in the log as the agent's own, is asked
// again, waits for a decision, and, allowed, runs once.
func TestACallAnnouncedRunningThenAskedWaits(t *testing.T) {
	t.Parallel()
	e, ws := agentEnv(t, provider.ToolsConfig{})
	w := e.dial(true).HelloFromStart(e.agentSession("s", ws))
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"edit_running d.txt later"}`, &r)
	ap := e.waitApproval(w, "s", 1)[0]
	if code, _ := e.do("POST", "/v1/sessions/s/approvals/"+ap.CallID, nil, `{"decision":"allow"}`, nil); code != 200 {
		t.Fatalf("decide: %d", code)
	}
	if text := replyOf(w, r.TurnID); text != "edited d.txt" {
		t.Fatalf("reply %q", text)
	}
	var got []string
	for _, ev := range e.events("s") {
		if ev.CallID == ap.CallID && ev.Type != wire.EventNotice {
			got = append(got, string(ev.Type)+":"+ev.Policy+ev.State)
		}
	}
	// The request is handled beside the updates before it (the SDK's
	// goroutines): it finds the call announced running, or not yet.
	if g := strings.Join(got, " "); g != "tool_call:agent tool_call:ask approval: tool_result:completed" && g != "tool_call:ask approval: tool_result:completed" {
		t.Fatalf("the call's events %v", got)
	}
}
