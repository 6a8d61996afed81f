package acphost

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"albedo/hub/acphost/fakeagent"
	"albedo/hub/provider"
	"albedo/wire"
)

// The test binary is the fake agent when run again with fakeagent.Env.
func TestMain(m *testing.M) {
	if os.Getenv(fakeagent.Env) != "" {
		fakeagent.Main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// recorder is a Sink that keeps what a turn did; decide answers the
// calls that ask (allow when nil).
type recorder struct {
	mu       sync.Mutex
	opened   []string
	text     strings.Builder
	thought  string
	plan     []wire.PlanEntry
	calls    []Call
	results  []Result
	notes    []string
	usage    *wire.Usage
	outputs  int
	policy   func(c Call, def string) string // the policy's decision; "" asks
	decide   func(c Call) string
	proposed chan Call
	// slowCall, when set, holds each Call for up to a second, or until a
	// call is asked again: a window for a permission request that would
	// overtake the commit.
	slowCall   bool
	done       map[string]bool // the calls Call committed
	askedEarly []string        // the calls asked again before Call committed them
	early      chan struct{}
	earlyOnce  sync.Once
}

func (r *recorder) Opened(_ context.Context, id, how, reason string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opened = append(r.opened, how+" "+id)
	return nil
}
func (r *recorder) Text(d string) { r.mu.Lock(); r.text.WriteString(d); r.mu.Unlock() }
func (r *recorder) Thought(d string) {
	r.mu.Lock()
	r.thought += d
	r.mu.Unlock()
}
func (r *recorder) Plan(e []wire.PlanEntry) { r.mu.Lock(); r.plan = e; r.mu.Unlock() }
func (r *recorder) Output(string, string)   { r.mu.Lock(); r.outputs++; r.mu.Unlock() }
func (r *recorder) Usage(u wire.Usage)      { r.mu.Lock(); r.usage = &u; r.mu.Unlock() }
func (r *recorder) Call(_ context.Context, c Call) error {
	if r.slowCall {
		select {
		case <-r.early:
		case <-time.After(time.Second):
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	if r.done == nil {
		r.done = map[string]bool{}
	}
	r.done[c.ID] = true
	return nil
}
func (r *recorder) Propose(_ context.Context, c Call, def string) (string, error) {
	r.mu.Lock()
	if c.Again && !r.done[c.ID] {
		r.askedEarly = append(r.askedEarly, c.ID)
		if r.early != nil {
			r.earlyOnce.Do(func() { close(r.early) })
		}
	}
	r.calls = append(r.calls, c)
	r.mu.Unlock()
	if r.proposed != nil {
		r.proposed <- c
	}
	if r.policy != nil {
		return r.policy(c, def), nil
	}
	if def == wire.PolicyAllow {
		return wire.DecisionAllow, nil
	}
	return "", nil
}
func (r *recorder) Await(ctx context.Context, id string) (string, string, error) {
	r.mu.Lock()
	var c Call
	for _, x := range r.calls {
		if x.ID == id {
			c = x
		}
	}
	r.mu.Unlock()
	if r.decide == nil {
		return wire.DecisionAllow, "", nil
	}
	d := r.decide(c)
	if d == "wait" {
		<-ctx.Done()
		_ = r.Result(ctx, Result{ID: id, State: wire.ToolCancelled})
		return wire.ToolCancelled, "", nil
	}
	return d, "denied by ann", nil
}
func (r *recorder) Result(_ context.Context, res Result) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.results {
		if x.ID == res.ID {
			return nil // ended already
		}
	}
	r.results = append(r.results, res)
	return nil
}
func (r *recorder) Note(_ context.Context, id, text string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, text)
	return nil
}

func (r *recorder) reply() string { r.mu.Lock(); defer r.mu.Unlock(); return r.text.String() }

// resultOf is the result of the call of tool.
func (r *recorder) resultOf(t *testing.T, tool string) (Call, Result) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.calls {
		if c.Tool != tool {
			continue
		}
		for _, res := range r.results {
			if res.ID == c.ID {
				return c, res
			}
		}
		t.Fatalf("call %s (%s) has no result: %+v", c.ID, tool, r.results)
	}
	t.Fatalf("no call of %s: %+v", tool, r.calls)
	return Call{}, Result{}
}

// config is the fake agent's profile.
func config(mode string) provider.AgentConfig {
	return provider.AgentConfig{Command: []string{os.Args[0]}, Env: []string{fakeagent.Env + "=" + mode, fakeagent.QuickExit}, StopIdle: time.Minute,
		StartTimeout: 10 * time.Second, FS: true, Terminal: true, TerminalTimeout: 10 * time.Second, MaxCalls: 20}
}

// env is a host and a workspace.
type env struct {
	host *Host
	ws   string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	h := New(nil, nil)
	t.Cleanup(h.Close)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &env{host: h, ws: ws}
}

// prompt runs one turn of session s with input, mode the fake's.
func (e *env) prompt(t *testing.T, ctx context.Context, s, mode, input string, r *recorder, resume string) error {
	t.Helper()
	return e.host.Prompt(ctx, Turn{Session: s, Profile: "fake", Config: config(mode), Workspace: e.ws, Input: input, Resume: resume, Sink: r})
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestATurnStreamsTheReplyThoughtAndPlan(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := &recorder{}
	if err := e.prompt(t, ctxT(t), "s1", "1", "hello", r, ""); err != nil {
		t.Fatal(err)
	}
	if got := r.reply(); got != "Hello from the agent." {
		t.Fatalf("reply %q", got)
	}
	if r.thought != "thinking it over" || len(r.plan) != 2 || r.plan[0].Content != "say hello" || r.plan[0].Status != "in_progress" {
		t.Fatalf("thought %q plan %+v", r.thought, r.plan)
	}
	if r.usage == nil || r.usage.InputTokens != 10 || r.usage.OutputTokens != 5 {
		t.Fatalf("usage %+v", r.usage)
	}
	if len(r.opened) != 1 || !strings.HasPrefix(r.opened[0], OpenedNew+" fake-") {
		t.Fatalf("opened %v", r.opened)
	}
	// The next turn keeps the process and its session.
	r2 := &recorder{}
	if err := e.prompt(t, ctxT(t), "s1", "1", "recall", r2, ""); err != nil {
		t.Fatal(err)
	}
	if len(r2.opened) != 0 || !strings.Contains(r2.reply(), "prompts=2 ") {
		t.Fatalf("second turn opened %v, replied %q", r2.opened, r2.reply())
	}
}

func TestAnEditAsksThenWritesInsideTheWorkspace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.ws, "a.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{decide: func(Call) string { return wire.DecisionAllow }}
	if err := e.prompt(t, ctxT(t), "s1", "1", "edit a.txt new words", r, ""); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(e.ws, "a.txt"))
	if string(b) != "new words\n" || !strings.Contains(r.reply(), "edited a.txt") {
		t.Fatalf("file %q reply %q", b, r.reply())
	}
	edit, res := r.resultOf(t, "acp:edit")
	if *ptr(edit.Title) != "Edit a.txt" || len(edit.Locations) != 1 || !strings.Contains(edit.Diff, "-old") || !strings.Contains(edit.Diff, "+new words") {
		t.Fatalf("edit call %+v", edit)
	}
	if res.State != wire.ToolCompleted || res.Diff != "" { // the change made is the one its call carries
		t.Fatalf("edit result %+v", res)
	}
	w, wres := r.resultOf(t, ToolFSWrite)
	if w.Title != "Write a.txt" || !strings.Contains(w.Diff, "--- a/a.txt") || wres.State != wire.ToolCompleted || wres.Diff != w.Diff {
		t.Fatalf("write %+v %+v", w, wres)
	}
	if len(r.notes) != 1 || !strings.Contains(r.notes[0], "“Allow” (allow_once)") {
		t.Fatalf("notes %q", r.notes)
	}
}

func ptr(s string) *string { return &s }

// A call the agent announces as running and then asks about (as opencode
// does) is asked again once its tool_call is committed, not before: the
// store has no call to ask on until then.
func TestACallAnnouncedRunningIsAskedOnceCommitted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.ws, "a.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{decide: func(Call) string { return wire.DecisionAllow }, slowCall: true, early: make(chan struct{})}
	if err := e.prompt(t, ctxT(t), "s1", "1", "edit_started a.txt new words", r, ""); err != nil {
		t.Fatal(err)
	}
	if len(r.askedEarly) > 0 {
		t.Fatalf("calls asked again before their commit: %v", r.askedEarly)
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "a.txt")); string(b) != "new words\n" {
		t.Fatalf("a.txt holds %q; reply %q", b, r.reply())
	}
	if _, res := r.resultOf(t, "acp:edit"); res.State != wire.ToolCompleted {
		t.Fatalf("edit result %+v", res)
	}
}

func TestADenialIsRejectOnceAndNothingIsWritten(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := &recorder{decide: func(Call) string { return wire.DecisionDeny }}
	if err := e.prompt(t, ctxT(t), "s1", "1", "edit b.txt words", r, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "b.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("b.txt: %v", err)
	}
	_, res := r.resultOf(t, "acp:edit")
	if res.State != wire.ToolDenied || !strings.Contains(res.Error, "denied by ann") {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(r.reply(), "not allowed") || len(r.notes) != 1 || !strings.Contains(r.notes[0], "“Reject” (reject_once)") {
		t.Fatalf("reply %q notes %q", r.reply(), r.notes)
	}
}

func TestAllowForTheSessionAnswersAllowAlways(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := &recorder{decide: func(Call) string { return wire.DecisionAllowSession }}
	if err := e.prompt(t, ctxT(t), "s1", "1", "edit c.txt x", r, ""); err != nil {
		t.Fatal(err)
	}
	if len(r.notes) != 1 || !strings.Contains(r.notes[0], "“Always allow” (allow_always)") {
		t.Fatalf("notes %q", r.notes)
	}
}

func TestPickOptionTakesTheClosestOfTheSameSense(t *testing.T) {
	t.Parallel()
	onlyAlways := []acpOption{{"allow_always", "a"}, {"reject_always", "r"}}
	cases := []struct {
		opts     []acpOption
		decision string
		want     string
	}{
		{onlyAlways, wire.DecisionAllow, "a"},
		{onlyAlways, wire.DecisionDeny, "r"},
		{[]acpOption{{"allow_once", "o"}}, wire.DecisionDeny, ""},
		{[]acpOption{{"reject_once", "n"}}, wire.DecisionAllowSession, ""},
	}
	for _, c := range cases {
		got, ok := pickOption(options(c.opts), c.decision)
		if string(got.OptionId) != c.want || ok != (c.want != "") {
			t.Errorf("%v %s: got %q %t, want %q", c.opts, c.decision, got.OptionId, ok, c.want)
		}
	}
}

func TestWritesAndReadsOutsideTheWorkspaceAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(e.ws, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"write ../escaped x", "write " + filepath.Join(outside, "abs") + " x", "write link/through x",
		"read link/secret", "read ../../../../etc/passwd"} {
		r := &recorder{}
		if err := e.prompt(t, ctxT(t), "s1", "1", in, r, ""); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.reply(), "refused") || strings.Contains(r.reply(), "s3cret") {
			t.Fatalf("%s: reply %q", in, r.reply())
		}
		r.mu.Lock()
		n := len(r.calls)
		r.mu.Unlock()
		if n != 0 {
			t.Fatalf("%s: a refused path made calls %+v", in, r.calls)
		}
	}
	for _, name := range []string{"escaped", "abs", "through"} {
		for _, dir := range []string{filepath.Dir(e.ws), outside} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				t.Fatalf("%s was written in %s", name, dir)
			}
		}
	}
}

func TestAPolicyDenialOfWritesRefusesThem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := &recorder{policy: func(c Call, def string) string {
		if c.Tool == ToolFSWrite {
			return wire.DecisionDeny
		}
		return wire.DecisionAllow
	}}
	if err := e.prompt(t, ctxT(t), "s1", "1", "write d.txt x", r, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "d.txt")); err == nil {
		t.Fatal("d.txt was written")
	}
	_, res := r.resultOf(t, ToolFSWrite)
	if res.State != wire.ToolDenied || !strings.Contains(r.reply(), "refused") {
		t.Fatalf("result %+v reply %q", res, r.reply())
	}
}

func TestACommandRunsInTheWorkspace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := &recorder{}
	if err := e.prompt(t, ctxT(t), "s1", "1", "run pwd", r, ""); err != nil {
		t.Fatal(err)
	}
	if got := r.reply(); got != "output: "+e.ws {
		t.Fatalf("reply %q, want the workspace %s", got, e.ws)
	}
	c, res := r.resultOf(t, ToolTerminal)
	if c.Title != "pwd" || res.State != wire.ToolCompleted || strings.TrimSpace(res.Output) != e.ws {
		t.Fatalf("call %+v result %+v", c, res)
	}
	_, exec := r.resultOf(t, "acp:execute")
	if exec.State != wire.ToolCompleted || strings.TrimSpace(exec.Output) != e.ws {
		t.Fatalf("the agent's call %+v", exec)
	}
	r2 := &recorder{}
	if err := e.prompt(t, ctxT(t), "s1", "1", "run sh -c exit_7_please", r2, ""); err != nil {
		t.Fatal(err)
	}
	if _, res := r2.resultOf(t, ToolTerminal); res.State != wire.ToolFailed || !strings.Contains(res.Error, "exit status 127") {
		t.Fatalf("failing command %+v", res)
	}
}

func TestTurningOffFilesAndCommandsRefusesThem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := config("1")
	cfg.FS, cfg.Terminal = false, false
	for _, in := range []string{"write e.txt x", "run pwd"} {
		r := &recorder{}
		err := e.host.Prompt(ctxT(t), Turn{Session: "s1", Profile: "fake", Config: cfg, Workspace: e.ws, Input: in, Sink: r})
		if err != nil || !strings.Contains(r.reply(), "refused") || slices.ContainsFunc(r.calls, func(c Call) bool { return c.Tool == ToolFSWrite || c.Tool == ToolTerminal }) {
			t.Fatalf("%s: err %v reply %q calls %+v", in, err, r.reply(), r.calls)
		}
	}
}

func TestTheAgentsOwnCallIsCommittedAsAllowedWithItsFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := &recorder{}
	if err := e.prompt(t, ctxT(t), "s1", "1", "own", r, ""); err != nil {
		t.Fatal(err)
	}
	c, res := r.resultOf(t, "acp:read")
	if c.Title != "Read the notes" || len(c.Locations) != 1 || *c.Locations[0].Line != 3 || res.Output != "the notes say hi" {
		t.Fatalf("call %+v result %+v", c, res)
	}
}

func TestAnInterruptSendsCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := &recorder{}
	ctx, cancel := context.WithCancelCause(ctxT(t))
	stop := errors.New("interrupted by test")
	go func() {
		for !strings.Contains(r.reply(), "working") {
			time.Sleep(5 * time.Millisecond) // polls the recorder: no event to wait on in a fake sink
		}
		cancel(stop)
	}()
	if err := e.prompt(t, ctx, "s1", "1", "wait", r, ""); !errors.Is(err, stop) {
		t.Fatalf("err %v", err)
	}
	// The agent stopped its prompt and is there for the next.
	r2 := &recorder{}
	if err := e.prompt(t, ctxT(t), "s1", "1", "hello", r2, ""); err != nil || e.host.Running() != 1 {
		t.Fatalf("after the interrupt: %v, %d running", err, e.host.Running())
	}
}

func TestAnInterruptCancelsAWaitingPermission(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := &recorder{decide: func(Call) string { return "wait" }, proposed: make(chan Call, 1)}
	ctx, cancel := context.WithCancelCause(ctxT(t))
	go func() { <-r.proposed; cancel(errors.New("stop")) }()
	_ = e.prompt(t, ctx, "s1", "1", "edit f.txt x", r, "")
	_, res := r.resultOf(t, "acp:edit")
	if res.State != wire.ToolCancelled {
		t.Fatalf("result %+v reply %q", res, r.reply())
	}
	if _, err := os.Stat(filepath.Join(e.ws, "f.txt")); err == nil {
		t.Fatal("f.txt was written")
	}
}

func TestACrashMidTurnFailsItWithTheAgentsLastWords(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := &recorder{}
	err := e.prompt(t, ctxT(t), "s1", "1", "crash", r, "")
	if err == nil || !strings.Contains(err.Error(), "exited mid-turn") || !strings.Contains(err.Error(), "crashing as asked") {
		t.Fatalf("err %v", err)
	}
	if e.host.Running() != 0 {
		t.Fatal("the crashed agent is still counted")
	}
	// The next turn starts a new process, which loads the session.
	r2 := &recorder{}
	id := strings.TrimPrefix(firstOpened(t, r), OpenedNew+" ")
	if err := e.prompt(t, ctxT(t), "s1", "1", "recall", r2, id); err != nil {
		t.Fatal(err)
	}
	if firstOpened(t, r2) != OpenedLoaded+" "+id || !strings.Contains(r2.reply(), "prompts=2 transcript=false") || strings.Contains(r2.reply(), "REPLAYED") {
		t.Fatalf("opened %v reply %q", r2.opened, r2.reply())
	}
}

func firstOpened(t *testing.T, r *recorder) string {
	t.Helper()
	if len(r.opened) == 0 {
		t.Fatal("no session opened")
	}
	return r.opened[0]
}

func TestAnAgentThatCannotLoadStartsAnewWithTheTranscript(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := &recorder{}
	err := e.host.Prompt(ctxT(t), Turn{Session: "s1", Profile: "fake", Config: config("noload"), Workspace: e.ws, Input: "recall",
		Resume: "fake-old", Note: "your previous turn was lost", Sink: r,
		Transcript: []provider.Message{{Role: wire.RoleUser, Author: "ann", Text: "fix the bug"}, {Role: wire.RoleAssistant, Author: "fake", Text: "done"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(firstOpened(t, r), OpenedAnew+" ") || !strings.Contains(r.reply(), "transcript=true") || !strings.Contains(r.reply(), "your previous turn was lost") {
		t.Fatalf("opened %v reply %q", r.opened, r.reply())
	}
}

func TestAnAgentThatNeverAnswersInitializeFailsTheTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := config("silent")
	cfg.StartTimeout = 300 * time.Millisecond
	err := e.host.Prompt(ctxT(t), Turn{Session: "s1", Profile: "fake", Config: cfg, Workspace: e.ws, Input: "hello", Sink: &recorder{}})
	if err == nil || !strings.Contains(err.Error(), "did not answer initialize within 300ms") || e.host.Running() != 0 {
		t.Fatalf("err %v, %d running", err, e.host.Running())
	}
}

func TestAMissingWorkspaceOrProgramIsSaid(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := e.host.Prompt(ctxT(t), Turn{Session: "s1", Config: config("1"), Workspace: filepath.Join(e.ws, "nope"), Sink: &recorder{}}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("missing workspace: %v", err)
	}
	cfg := config("1")
	cfg.Command = []string{"/no/such/agent"}
	if err := e.host.Prompt(ctxT(t), Turn{Session: "s1", Config: cfg, Workspace: e.ws, Sink: &recorder{}}); err == nil || !strings.Contains(err.Error(), "start the agent") {
		t.Fatalf("missing program: %v", err)
	}
}

func TestTooManyCallsCancelTheTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := &recorder{}
	err := e.prompt(t, ctxT(t), "s1", "1", "calls 50", r, "")
	if err == nil || !strings.Contains(err.Error(), "more than 20 tool calls") {
		t.Fatalf("err %v", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) != 20 {
		t.Fatalf("%d calls committed, want 20", len(r.calls))
	}
}

func TestGarbageAndFloodsAreBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := &recorder{}
	if err := e.prompt(t, ctxT(t), "s1", "1", "garbage", r, ""); err != nil || r.reply() != "still here" {
		t.Fatalf("garbage: %v %q", err, r.reply())
	}
	e.host.mu.Lock()
	a := e.host.agents["s1"]
	e.host.mu.Unlock()
	if n := len(a.stderr.String()); n > maxStderr {
		t.Fatalf("kept %d bytes of stderr", n)
	}
	// A flood is taken whole, or, past what the connection holds
	// waiting, ends the turn with words saying so; the next turn works.
	// Three times the thousand the connection holds is a flood; its
	// deadline is loose, as a loaded machine under -race takes it at a
	// few hundred updates a second.
	r2 := &recorder{}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := e.prompt(t, ctx, "s1", "1", "flood 3000", r2, "")
	if err != nil && !strings.Contains(err.Error(), "sent more at once than the daemon takes") || err == nil && r2.reply() != strings.Repeat("x", 3000) {
		t.Fatalf("flood: %v, %d bytes", err, len(r2.reply()))
	}
	if err := e.prompt(t, ctxT(t), "s1", "1", "hello", &recorder{}, ""); err != nil {
		t.Fatal(err)
	}
}

func TestIdleAgentsStop(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := config("1")
	cfg.StopIdle = 50 * time.Millisecond
	if err := e.host.Prompt(ctxT(t), Turn{Session: "s1", Profile: "fake", Config: cfg, Workspace: e.ws, Input: "hello", Sink: &recorder{}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for e.host.Running() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle agent still runs")
		}
		time.Sleep(10 * time.Millisecond) // polls the host's count: the stop has no event of its own
	}
}

// acpOption is a permission option in short.
type acpOption struct{ kind, id string }

func options(os []acpOption) []acpPermissionOption {
	out := make([]acpPermissionOption, len(os))
	for i, o := range os {
		out[i] = acpPermissionOption{Kind: acpKind(o.kind), OptionId: acpOptionID(o.id), Name: o.id}
	}
	return out
}
