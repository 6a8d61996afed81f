//go:build !e2e_only || e2e_core

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/hub/provider/fakeanthropic"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// A tool call that waits for a decision survives `albedo stop` and a
// SIGKILL: after each restart it is still listed, the session is still in
// phase approval, and nothing of the turn was closed; a decision then
// resumes the turn, which the daemon rebuilds from the log: the example
// bot runs its tool and the model gets the result and answers. The
// turn's usage counts the response from before the restarts.
func TestAPendingApprovalSurvivesStopAndKill(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	f := withFake(t, home)
	d := startDaemon(t, home)
	c := newClient(t, home)
	ctx := ctxT(t)
	token := strings.TrimSpace(lastLine(cli(t, home, "bots", "add", "example")))
	startBot(t, home, token, time.Millisecond)
	if _, err := c.CreateSession(ctx, "k", wire.SessionCreate{Title: "k", Provider: "fake"}); err != nil {
		t.Fatal(err)
	}
	waitTool(t, ctx, c, "k", "bot:example/word_count")
	f.Push(fakeopenai.Reply{Chunks: []string{"Counting."}, ToolCalls: []fakeopenai.ToolCall{
		{ID: "call_1", Name: "bot__example__word_count", Arguments: `{"text":"one two three"}`}},
		Usage: &fakeopenai.Usage{PromptTokens: 10, CompletionTokens: 3}},
		fakeopenai.Reply{Chunks: []string{"Three words."}, Usage: &fakeopenai.Usage{PromptTokens: 20, CompletionTokens: 4}})
	r, err := c.PutInput(ctx, "k", uuid.NewString(), "how many words?")
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if st, err := waitPhase(wctx, c, "k", wire.PhaseApproval); err != nil || st.Status.Pending != 1 {
		t.Fatalf("before the stop: %+v %v\n%v\n%s", st.Status, err, events(t, ctx, c, "k"), d.logText())
	}
	pending := func(when string) string {
		t.Helper()
		list := cliJSON(t, home, "approvals")
		if len(list) != 1 || list[0]["session"] != "k" || list[0]["tool"] != "bot:example/word_count" || list[0]["turn_id"] != r.TurnID {
			t.Fatalf("%s: approvals %v", when, list)
		}
		return list[0]["call_id"].(string)
	}
	call := pending("before the stop")

	d.stop()
	d = startDaemon(t, home)
	if got := pending("after albedo stop"); got != call {
		t.Fatalf("after the stop the call is %s, was %s", got, call)
	}
	if st, err := waitPhase(ctx, c, "k", wire.PhaseApproval); err != nil || st.Status.TurnID != r.TurnID {
		t.Fatalf("after the stop: %+v %v", st.Status, err)
	}
	d.kill()
	startDaemon(t, home)
	if got := pending("after SIGKILL"); got != call {
		t.Fatalf("after the kill the call is %s, was %s", got, call)
	}

	out := cli(t, home, "approve", "k", call, "--reason", "go ahead")
	if !strings.Contains(out, call+": allow") {
		t.Fatalf("albedo approve: %s", out)
	}
	if _, stderr, code := cliRun(t, home, "", "approve", "k", call, "--deny"); code == 0 || !strings.Contains(stderr, "decided already") {
		t.Fatalf("a second decision: exit %d, %s", code, stderr)
	}
	evs := waitTurnsClosed(t, ctx, c, "k", 1)
	kinds, result, reply, end := turnKinds(evs)
	if kinds != "message turn tool_call approval tool_result message turn" {
		t.Fatalf("events: %v", kinds)
	}
	if result.State != wire.ToolCompleted || result.Text != "3 words" || reply.Text != "Three words." || end.State != wire.TurnCompleted {
		t.Fatalf("result %+v, reply %+v, end %+v", result, reply, end)
	}
	// The turn's usage is both responses', the one before the restarts too.
	if u := end.TurnUsage(); u == nil || u.InputTokens != 30 || u.OutputTokens != 7 {
		t.Fatalf("the turn's usage: %+v", u)
	}
	reqs := f.Requests()
	last := string(reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1])
	if !strings.Contains(last, `"role":"tool"`) || !strings.Contains(last, "3 words") || !strings.Contains(last, call) {
		t.Fatalf("the model was sent %s", last)
	}
}

// A call that was running when the daemon was killed is not run again
// unsaid: after the restart its turn resumes, the call is answered
// failed ("may or may not have acted"), the model is told, and the turn
// completes. The bot was handed it once.
func TestACallRunningAtAKillIsToldNotRunAgain(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	f := withFakeAnd(t, home, "\n[[tools.rules]]\nmatch = \"bot:slow/*\"\npolicy = \"allow\"\n")
	d := startDaemon(t, home)
	c := newClient(t, home)
	ctx := ctxT(t)
	token := strings.TrimSpace(lastLine(cli(t, home, "bots", "add", "slow")))
	bc, err := client.New(client.Options{Home: home, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	pushes := make(chan wire.ToolPush, 8)
	st := bc.Stream(client.StreamOptions{
		Tools:  []wire.ToolSpec{{Name: "wait", InputSchema: []byte(`{"type":"object"}`)}},
		OnTool: func(p wire.ToolPush) { pushes <- p }, // and never answers
	})
	defer st.Close()
	if _, err := c.CreateSession(ctx, "k", wire.SessionCreate{Title: "k", Provider: "fake"}); err != nil {
		t.Fatal(err)
	}
	waitTool(t, ctx, c, "k", "bot:slow/wait")
	f.Push(fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{ID: "x", Name: "bot__slow__wait", Arguments: `{}`}}},
		fakeopenai.Reply{Chunks: []string{"It may have run."}})
	if _, err := c.PutInput(ctx, "k", uuid.NewString(), "go"); err != nil {
		t.Fatal(err)
	}
	var first wire.ToolPush
	select {
	case first = <-pushes:
	case <-ctx.Done():
		t.Fatal("the bot was never handed the call")
	}
	d.kill()
	startDaemon(t, home)
	evs := waitTurnsClosed(t, ctx, c, "k", 1)
	var result, end wire.Event
	for _, ev := range evs {
		switch ev.Type {
		case wire.EventToolResult:
			result = ev
		case wire.EventTurn:
			end = ev
		}
	}
	if result.CallID != first.CallID || result.State != wire.ToolFailed || !strings.Contains(result.Error, "may or may not have acted") || end.State != wire.TurnCompleted {
		t.Fatalf("result %+v, end %+v", result, end)
	}
	select {
	case again := <-pushes:
		t.Fatalf("the call was handed out again: %+v", again)
	default:
	}
}

// A bot killed while its tool runs: the call goes to the bot's next
// connection, here the bot started again, which runs it; the call has one
// result and the turn completes. Real processes: the example bot (its
// word_count takes a pace a word), SIGKILLed, and a second one.
func TestABotKilledMidToolIsCalledAgain(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	f := withFakeAnd(t, home, "\n[[tools.rules]]\nmatch = \"bot:example/*\"\npolicy = \"allow\"\n")
	d := startDaemon(t, home)
	c := newClient(t, home)
	ctx := ctxT(t)
	token := strings.TrimSpace(lastLine(cli(t, home, "bots", "add", "example")))
	slow := startBot(t, home, token, time.Hour) // word_count would take hours
	if _, err := c.CreateSession(ctx, "k", wire.SessionCreate{Title: "k", Provider: "fake"}); err != nil {
		t.Fatal(err)
	}
	waitTool(t, ctx, c, "k", "bot:example/word_count")
	f.Push(fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{
		{ID: "call_1", Name: "bot__example__word_count", Arguments: `{"text":"one two three"}`}}},
		fakeopenai.Reply{Chunks: []string{"Three words."}})
	if _, err := c.PutInput(ctx, "k", uuid.NewString(), "how many words?"); err != nil {
		t.Fatal(err)
	}
	if err := slow.log.await(ctx, "msg=tool "); err != nil {
		t.Fatalf("the first bot: %v\n%s\n%s", err, slow.log, d.logText())
	}
	slow.kill()
	again := startBot(t, home, token, time.Millisecond)
	evs := waitTurnsClosed(t, ctx, c, "k", 1)
	kinds, result, reply, end := turnKinds(evs)
	if kinds != "message turn tool_call tool_result message turn" {
		t.Fatalf("events: %v", kinds)
	}
	if result.State != wire.ToolCompleted || result.Text != "3 words" || reply.Text != "Three words." || end.State != wire.TurnCompleted {
		t.Fatalf("result %+v, reply %+v, end %+v", result, reply, end)
	}
	if !strings.Contains(again.log.String(), "call="+result.CallID) {
		t.Fatalf("the second bot did not run the call:\n%s", again.log)
	}
}

// Deny and allow for the session, from the CLI, through the Anthropic
// provider: the model's first call is denied with a reason, which the
// model is told in its tool_result block, and the turn completes; the
// next turn's call is allowed for the session, and the turn after that
// calls the tool without asking. Real processes: the daemon, the example
// bot, the CLI; the fake speaks Anthropic's Messages API.
func TestDenyAndAllowForTheSessionFromTheCLIThroughAnthropic(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	ant, err := fakeanthropic.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ant.Close() })
	cfg := fmt.Sprintf("[providers.claude]\nkind = \"anthropic\"\nbase_url = %q\ndefault_model = \"claude-test\"\n", ant.URL)
	if err := os.WriteFile(filepath.Join(home, client.ConfigFile), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, home)
	c := newClient(t, home)
	ctx := ctxT(t)
	token := strings.TrimSpace(lastLine(cli(t, home, "bots", "add", "example")))
	startBot(t, home, token, time.Millisecond)
	if _, err := c.CreateSession(ctx, "k", wire.SessionCreate{Title: "k", Provider: "claude"}); err != nil {
		t.Fatal(err)
	}
	waitTool(t, ctx, c, "k", "bot:example/word_count")
	call := func(id string) fakeanthropic.Reply {
		return fakeanthropic.Reply{ToolCalls: []fakeanthropic.ToolCall{{ID: id, Name: "bot__example__word_count", Input: `{"text":"a b"}`}}}
	}
	ant.Push(call("toolu_1"), fakeanthropic.Reply{Chunks: []string{"Not allowed, then."}},
		call("toolu_2"), fakeanthropic.Reply{Chunks: []string{"Two words."}},
		call("toolu_3"), fakeanthropic.Reply{Chunks: []string{"Two again."}})
	decide := func(n int, flags ...string) {
		t.Helper()
		if _, err := c.PutInput(ctx, "k", uuid.NewString(), "count"); err != nil {
			t.Fatal(err)
		}
		if st, err := waitPhase(ctx, c, "k", wire.PhaseApproval); err != nil || st.Status.Pending != 1 {
			t.Fatalf("turn %d: %+v %v", n, st.Status, err)
		}
		list := cliJSON(t, home, "approvals", "k")
		if len(list) != 1 {
			t.Fatalf("turn %d: approvals %v", n, list)
		}
		cli(t, home, append([]string{"approve", "k", list[0]["call_id"].(string)}, flags...)...)
		waitTurnsClosed(t, ctx, c, "k", n)
	}
	decide(1, "--deny", "--reason", "not on this text")
	decide(2, "--session")
	if _, err := c.PutInput(ctx, "k", uuid.NewString(), "count again"); err != nil {
		t.Fatal(err)
	}
	evs := waitTurnsClosed(t, ctx, c, "k", 3)
	var results, policies, decisions []string
	for _, ev := range evs {
		switch ev.Type {
		case wire.EventToolCall:
			policies = append(policies, ev.Policy)
		case wire.EventApproval:
			decisions = append(decisions, ev.Decision+":"+ev.Reason)
		case wire.EventToolResult:
			results = append(results, ev.State+":"+ev.Text+ev.Error)
		}
	}
	if fmt.Sprint(policies) != "[ask ask allow]" || fmt.Sprint(decisions) != "[deny:not on this text allow_session:]" ||
		len(results) != 3 || !strings.HasPrefix(results[0], "denied:") || !strings.Contains(results[0], "not on this text") ||
		results[1] != "completed:2 words" || results[2] != "completed:2 words" {
		t.Fatalf("policies %v, decisions %v, results %q", policies, decisions, results)
	}
	// The model was told of the denial, with the reason, in a tool_result
	// block of the call it made.
	told := ant.Requests()[1].Messages
	last := told[len(told)-1]
	if last.Role != "user" || len(last.Content) != 1 || last.Content[0].Type != "tool_result" ||
		!strings.Contains(string(last.Content[0].Content), "not on this text") {
		t.Fatalf("the model was sent %+v", last)
	}
}
