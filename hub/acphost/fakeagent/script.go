package fakeagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// turn is one prompt's run.
type turn struct {
	a       *agent
	ctx     context.Context
	sid     acp.SessionId
	text    string
	prompts int
}

func (t *turn) say(s string) {
	_ = t.a.conn.SessionUpdate(t.ctx, acp.SessionNotification{SessionId: t.sid, Update: acp.UpdateAgentMessageText(s)})
}

func (t *turn) send(u acp.SessionUpdate) {
	_ = t.a.conn.SessionUpdate(t.ctx, acp.SessionNotification{SessionId: t.sid, Update: u})
}

// path is p made absolute in the workspace.
func (t *turn) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(t.a.cwd, p)
}

func (t *turn) run(cmd string, args []string) (acp.StopReason, error) {
	switch cmd {
	case "hello":
		t.hello()
	case "edit", "edit_running", "edit_started":
		return t.edit(args, cmd)
	case "write", "read":
		return t.file(cmd, args)
	case "run":
		return t.command(args)
	case "own":
		t.own()
	case "calls":
		return t.calls(args)
	case "wait":
		t.say("working")
		for t.ctx.Err() == nil {
			select {
			case <-t.ctx.Done():
			case <-time.After(20 * time.Millisecond):
				t.say(".")
			}
		}
		return acp.StopReasonCancelled, nil
	case "crash":
		t.say("about to crash")
		time.Sleep(50 * time.Millisecond) // the piece goes out first
		fmt.Fprintln(os.Stderr, "fakeagent: crashing as asked")
		os.Exit(3)
	case "refuse":
		t.say("no.")
		return acp.StopReasonRefusal, nil
	case "max_tokens":
		return acp.StopReasonMaxTokens, nil
	case "flood":
		n, _ := strconv.Atoi(firstOr(args, "1000"))
		for range n {
			t.say("x")
		}
	case "huge":
		n, _ := strconv.Atoi(firstOr(args, "1000000"))
		t.say(strings.Repeat("y", n))
	case "garbage":
		t.garbage()
	case "recall":
		t.recall()
	default:
		t.say("unknown command " + cmd)
	}
	return acp.StopReasonEndTurn, nil
}

func (t *turn) hello() {
	t.send(acp.UpdateAgentThoughtText("thinking it over"))
	t.send(acp.UpdatePlan(acp.PlanEntry{Content: "say hello", Priority: "high", Status: "in_progress"},
		acp.PlanEntry{Content: "stop", Priority: "low", Status: "pending"}))
	for _, w := range []string{"Hello ", "from ", "the agent."} {
		t.say(w)
	}
}

// file writes or reads through the client's fs/*.
func (t *turn) file(cmd string, args []string) (acp.StopReason, error) {
	if len(args) < 1 || cmd == "write" && len(args) < 2 {
		return "", fmt.Errorf("write PATH TEXT, read PATH")
	}
	if cmd == "write" {
		_, err := t.a.conn.WriteTextFile(t.ctx, acp.WriteTextFileRequest{SessionId: t.sid, Path: t.path(args[0]), Content: strings.Join(args[1:], " ") + "\n"})
		if err != nil {
			t.say("write refused: " + err.Error())
		} else {
			t.say("wrote " + args[0])
		}
		return acp.StopReasonEndTurn, nil
	}
	r, err := t.a.conn.ReadTextFile(t.ctx, acp.ReadTextFileRequest{SessionId: t.sid, Path: t.path(args[0])})
	if err != nil {
		t.say("read refused: " + err.Error())
	} else {
		t.say("read: " + r.Content)
	}
	return acp.StopReasonEndTurn, nil
}

// own is a read call the agent runs without asking.
func (t *turn) own() {
	id := acp.ToolCallId("own-1")
	t.send(acp.StartToolCall(id, "Read the notes", acp.WithStartKind(acp.ToolKindRead), acp.WithStartStatus(acp.ToolCallStatusInProgress),
		acp.WithStartLocations([]acp.ToolCallLocation{{Path: t.path("notes.txt"), Line: acp.Ptr(3)}})))
	t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
		acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock("the notes say hi"))})))
	t.say("I read the notes.")
}

// calls announces N calls it runs on its own.
func (t *turn) calls(args []string) (acp.StopReason, error) {
	n, _ := strconv.Atoi(firstOr(args, "1"))
	for i := range n {
		id := acp.ToolCallId(fmt.Sprintf("c-%d", i))
		t.send(acp.StartToolCall(id, fmt.Sprintf("call %d", i), acp.WithStartKind(acp.ToolKindSearch), acp.WithStartStatus(acp.ToolCallStatusInProgress)))
		t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusCompleted)))
		if t.ctx.Err() != nil {
			return acp.StopReasonCancelled, nil
		}
	}
	t.say(fmt.Sprintf("made %d calls", n))
	return acp.StopReasonEndTurn, nil
}

// garbage writes lines that are no JSON-RPC, and much to stderr.
func (t *turn) garbage() {
	fmt.Fprintln(os.Stdout, "this is no JSON")
	fmt.Fprintln(os.Stdout, `{"jsonrpc":"2.0","method":"session/update","params":{"nonsense":true}}`)
	big := strings.Repeat("e", 1<<10)
	for range 512 {
		fmt.Fprintln(os.Stderr, big)
	}
	t.say("still here")
}

// recall says what the agent knows of its session.
func (t *turn) recall() {
	told := strings.Contains(t.text, "what was said before")
	note := ""
	if i := strings.Index(t.text, "[albedo: your"); i >= 0 {
		note = t.text[i:min(len(t.text), i+80)]
	}
	t.say(fmt.Sprintf("prompts=%d transcript=%t note=%q", t.prompts, told, note))
}

// edit asks to edit a file, then writes it if allowed; running, it says
// the call runs before it asks, as opencode does.
func (t *turn) edit(args []string, cmd string) (acp.StopReason, error) {
	if len(args) < 2 {
		return "", fmt.Errorf("edit PATH TEXT")
	}
	path, text := t.path(args[0]), strings.Join(args[1:], " ")+"\n"
	old, _ := os.ReadFile(path)
	oldText := string(old)
	id := acp.ToolCallId("edit-1")
	diff := []acp.ToolCallContent{acp.ToolDiffContent(path, text, oldText)}
	status := acp.ToolCallStatusPending
	if cmd == "edit_started" {
		status = acp.ToolCallStatusInProgress
	}
	t.send(acp.StartToolCall(id, "Edit "+args[0], acp.WithStartKind(acp.ToolKindEdit), acp.WithStartStatus(status),
		acp.WithStartLocations([]acp.ToolCallLocation{{Path: path}}), acp.WithStartContent(diff), acp.WithStartRawInput(map[string]any{"path": path})))
	if cmd == "edit_running" {
		t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusInProgress)))
	}
	resp, err := t.a.conn.RequestPermission(t.ctx, acp.RequestPermissionRequest{SessionId: t.sid,
		ToolCall: acp.ToolCallUpdate{ToolCallId: id, Title: acp.Ptr("Edit " + args[0]), Kind: acp.Ptr(acp.ToolKindEdit)},
		Options: []acp.PermissionOption{
			{Kind: acp.PermissionOptionKindAllowOnce, Name: "Allow", OptionId: "allow"},
			{Kind: acp.PermissionOptionKindAllowAlways, Name: "Always allow", OptionId: "always"},
			{Kind: acp.PermissionOptionKindRejectOnce, Name: "Reject", OptionId: "reject"},
		}})
	if err != nil {
		return "", err
	}
	if resp.Outcome.Cancelled != nil {
		t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed)))
		t.say("the edit was cancelled")
		return acp.StopReasonCancelled, nil
	}
	if o := resp.Outcome.Selected; o == nil || o.OptionId == "reject" {
		t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed)))
		t.say("I was not allowed to edit " + args[0])
		return acp.StopReasonEndTurn, nil
	}
	t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusInProgress)))
	if _, err := t.a.conn.WriteTextFile(t.ctx, acp.WriteTextFileRequest{SessionId: t.sid, Path: path, Content: text}); err != nil {
		t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed)))
		t.say("the write failed: " + err.Error())
		return acp.StopReasonEndTurn, nil
	}
	t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusCompleted), acp.WithUpdateContent(diff)))
	t.say("edited " + args[0])
	return acp.StopReasonEndTurn, nil
}

// command runs a program through the client's terminal.
func (t *turn) command(args []string) (acp.StopReason, error) {
	if len(args) < 1 {
		return "", fmt.Errorf("run PROGRAM ARGS")
	}
	id := acp.ToolCallId("run-1")
	t.send(acp.StartToolCall(id, "Run "+strings.Join(args, " "), acp.WithStartKind(acp.ToolKindExecute), acp.WithStartStatus(acp.ToolCallStatusInProgress)))
	term, err := t.a.conn.CreateTerminal(t.ctx, acp.CreateTerminalRequest{SessionId: t.sid, Command: args[0], Args: args[1:]})
	if err != nil {
		t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed)))
		t.say("the command was refused: " + err.Error())
		return acp.StopReasonEndTurn, nil
	}
	t.send(acp.UpdateToolCall(id, acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolTerminalRef(term.TerminalId)})))
	exit, err := t.a.conn.WaitForTerminalExit(t.ctx, acp.WaitForTerminalExitRequest{SessionId: t.sid, TerminalId: term.TerminalId})
	if err != nil {
		return "", err
	}
	out, err := t.a.conn.TerminalOutput(t.ctx, acp.TerminalOutputRequest{SessionId: t.sid, TerminalId: term.TerminalId})
	if err != nil {
		return "", err
	}
	status := acp.ToolCallStatusCompleted
	if exit.ExitCode == nil || *exit.ExitCode != 0 {
		status = acp.ToolCallStatusFailed
	}
	t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(status)))
	_, _ = t.a.conn.ReleaseTerminal(t.ctx, acp.ReleaseTerminalRequest{SessionId: t.sid, TerminalId: term.TerminalId})
	t.say("output: " + strings.TrimSpace(out.Output))
	return acp.StopReasonEndTurn, nil
}

func firstOr(args []string, def string) string {
	if len(args) > 0 {
		return args[0]
	}
	return def
}
