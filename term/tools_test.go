package term

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/wire"
)

// askCall is a model's call that asks for a decision, in turn t2 (demo's
// streaming turn).
func askCall(off int64, id, tool string) wire.Event {
	return wire.Event{Offset: off, Type: wire.EventToolCall, At: t0, TurnID: "t2", InputID: "i2", CallID: id, Tool: tool,
		Arguments: json.RawMessage(`{"text":"one two three"}`), Policy: wire.PolicyAsk, Author: "m1"}
}

func approval(off int64, id, decision, author, reason string) wire.Event {
	return wire.Event{Offset: off, Type: wire.EventApproval, At: t0, TurnID: "t2", CallID: id, Decision: decision, Author: author,
		AuthorID: "m-" + author, Reason: reason}
}

func toolResult(off int64, id, state, text, errText string) wire.Event {
	return wire.Event{Offset: off, Type: wire.EventToolResult, At: t0, TurnID: "t2", CallID: id, State: state, Text: text, Error: errText}
}

// decider is demo with the person as the focused session's owner, its
// turn waiting for a decision on call c1, caught up with its history.
func decider(t *testing.T) (*Model, *SessionView) {
	t.Helper()
	m := demo()
	m.Resize(120, 24)
	s := m.Sessions[0]
	s.Access = wire.AccessCreator
	m.Item(s.ID, itemReset(2))
	m.Item(s.ID, itemEvent(msg(1, "user", "ann", "how many words?")))
	m.Item(s.ID, itemEvent(msg(2, "assistant", "m1", "an earlier answer")))
	m.Item(s.ID, itemStatus(wire.StatusPush{Phase: wire.PhaseRunning, TurnID: "t2"}))
	call := askCall(3, "c1", "bot:example/word_count")
	call.Text = "Let me count."
	m.Item(s.ID, itemEvent(call))
	if cmds := m.Item(s.ID, itemStatus(wire.StatusPush{Phase: wire.PhaseApproval, TurnID: "t2", Pending: 1})); cmds != nil {
		t.Fatalf("the call is in the events, yet: %#v", cmds)
	}
	return m, s
}

// A call is one block: the model's words before it, as a reply; its
// tool, arguments and state; then, as they land, who decided and its
// output, in the same block, which takes the lines of neither event.
func TestToolCallBlock(t *testing.T) {
	t.Parallel()
	m, s := decider(t)
	r := screen(t, m)
	for _, want := range []string{"assistant · m1", "Let me count.", "⚙ bot:example/word_count · waiting for a decision",
		`{"text":"one two three"}`, "? planning", "waiting for a decision 0 s (Esc interrupts)"} {
		if !contains(r, want) {
			t.Fatalf("screen lacks %q:\n%s", want, strings.Join(r, "\n"))
		}
	}
	m.Item(s.ID, itemEvent(approval(4, "c1", wire.DecisionAllow, "bob", "fine")))
	m.Item(s.ID, itemStatus(wire.StatusPush{Phase: wire.PhaseRunning, TurnID: "t2"}))
	if r := screen(t, m); !contains(r, "⚙ bot:example/word_count · running") || !contains(r, "✓ allowed by bob: fine") {
		t.Fatalf("allowed:\n%s", strings.Join(r, "\n"))
	}
	m.Item(s.ID, itemEvent(toolResult(5, "c1", wire.ToolCompleted, "3 words\n", "")))
	r = screen(t, m)
	for _, want := range []string{"⚙ bot:example/word_count · completed", "✓ allowed by bob: fine", "│ 3 words"} {
		if !contains(r, want) {
			t.Fatalf("completed: screen lacks %q:\n%s", want, strings.Join(r, "\n"))
		}
	}
	if n := strings.Count(strings.Join(r, "\n"), "⚙ "); n != 1 {
		t.Fatalf("the call shows %d times:\n%s", n, strings.Join(r, "\n"))
	}
}

// The states a call ends in, and who decided, as its block says them.
func TestToolCallStates(t *testing.T) {
	t.Parallel()
	allow := askCall(1, "c", "bot:b/t")
	allow.Policy = wire.PolicyAllow
	deny := askCall(1, "c", "bot:b/t")
	deny.Policy = wire.PolicyDeny
	cases := []struct {
		name string
		evs  []wire.Event
		want []string
	}{
		{"policy allows, fails", []wire.Event{allow, toolResult(2, "c", wire.ToolFailed, "", "boom")},
			[]string{"⚙ bot:b/t · failed", "✓ allowed by the policy", "⚠ boom"}},
		{"policy denies", []wire.Event{deny, toolResult(2, "c", wire.ToolDenied, "", "the daemon's policy denies bot:b/t")},
			[]string{"⚙ bot:b/t · denied", "✗ denied by the policy"}},
		{"a person denies", []wire.Event{askCall(1, "c", "bot:b/t"), approval(2, "c", wire.DecisionDeny, "ann", ""),
			toolResult(3, "c", wire.ToolDenied, "", "denied by ann")}, []string{"⚙ bot:b/t · denied", "✗ denied by ann"}},
		{"for the session", []wire.Event{askCall(1, "c", "bot:b/t"), approval(2, "c", wire.DecisionAllowSession, "ann", ""),
			toolResult(3, "c", wire.ToolCompleted, "", "")}, []string{"✓ allowed for this session by ann", "│ (no output)"}},
		{"expired", []wire.Event{askCall(1, "c", "bot:b/t"), toolResult(2, "c", wire.ToolExpired, "", "no one decided within 1h0m0s")},
			[]string{"⚙ bot:b/t · expired", "⚠ no one decided within 1h0m0s"}},
		{"older than the history", []wire.Event{toolResult(2, "c", wire.ToolCompleted, "out", "")},
			[]string{"⚙ a call older than the history loaded · completed", "│ out"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &SessionView{ID: "s"}
			for _, ev := range tc.evs {
				s.Events = append(s.Events, ev)
				s.calls.add(ev)
			}
			got := texts(s.window(look{width: 70}, 0, 100))
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Fatalf("lacks %q:\n%s", w, got)
				}
			}
			if tc.name == "a person denies" && strings.Contains(got, "⚠") {
				t.Fatalf("a denial says who twice:\n%s", got)
			}
		})
	}
}

func texts(lines []line) string {
	var out []string
	for _, l := range lines {
		out = append(out, l.text)
	}
	return strings.Join(out, "\n")
}

// A long output, and long arguments, are folded to their first lines
// and a count of the rest, as a long paste is in the composer; Ctrl-O
// (with no paste folded) shows them whole, and again folds them.
func TestLongToolCallsFold(t *testing.T) {
	t.Parallel()
	m, s := decider(t)
	m.Resize(120, 80)
	var out []string
	for i := range 40 {
		out = append(out, fmt.Sprintf("output line %02d", i))
	}
	m.Item(s.ID, itemEvent(approval(4, "c1", wire.DecisionAllow, "bob", "")))
	m.Item(s.ID, itemEvent(toolResult(5, "c1", wire.ToolCompleted, strings.Join(out, "\n"), "")))
	r := screen(t, m)
	if !contains(r, "│ output line 05") || contains(r, "output line 06") || !contains(r, "[34 more lines · Ctrl-O shows]") {
		t.Fatalf("folded:\n%s", strings.Join(r, "\n"))
	}
	m.Key(key(tcell.KeyCtrlO, 0, 0))
	if r := screen(t, m); !contains(r, "│ output line 39") || contains(r, "more lines") {
		t.Fatalf("whole:\n%s", strings.Join(r, "\n"))
	}
	m.Key(key(tcell.KeyCtrlO, 0, 0))
	if r := screen(t, m); contains(r, "output line 39") {
		t.Fatalf("folded again:\n%s", strings.Join(r, "\n"))
	}
	// One long line of output is cut where the fold is, and its size said.
	one := callLines(&toolCall{result: &wire.Event{State: wire.ToolCompleted, Text: strings.Repeat("x", 64<<10)}}, look{width: 60})
	if got := texts(one); strings.Count(got, "│ x") != toolFoldShow || !strings.Contains(got, "[1 more line, 64 KiB · Ctrl-O shows]") {
		t.Fatalf("one long line:\n%s", got)
	}
	// Arguments wider than the transcript are indented JSON, folded too.
	big := askCall(6, "c2", "bot:b/t")
	var fields []string
	for i := range 20 {
		fields = append(fields, fmt.Sprintf(`"field%02d":"a value of some length"`, i))
	}
	big.Arguments = json.RawMessage("{" + strings.Join(fields, ",") + "}")
	lines := callLines(&toolCall{call: &big}, look{width: 60})
	if got := texts(lines); !strings.Contains(got, `    "field00": "a value of some length",`) || !strings.Contains(got, "[16 more lines · Ctrl-O shows]") {
		t.Fatalf("big arguments:\n%s", got)
	}
}

// Alt-Y, Alt-A and Alt-N decide the call waiting, once: while a decision
// is on its way the key does nothing more and the bar says so; the
// approval event, whoever made it, takes the bar away.
func TestDecisionKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r        rune
		decision string
		word     string
	}{{'y', wire.DecisionAllow, "allowing…"}, {'a', wire.DecisionAllowSession, "allowing for this session…"}, {'n', wire.DecisionDeny, "denying…"}} {
		m, s := decider(t)
		r := screen(t, m)
		if !contains(r, "⚠ bot:example/word_count waits for your decision") || !contains(r, decideKeys) {
			t.Fatalf("the bar:\n%s", strings.Join(r, "\n"))
		}
		cmds := m.Key(key(tcell.KeyRune, tc.r, tcell.ModAlt))
		want := cmdDecide{Session: s.ID, CallID: "c1", Tool: "bot:example/word_count", Decision: wire.Decision{Decision: tc.decision}}
		if len(cmds) != 1 || cmds[0] != want {
			t.Fatalf("Alt-%c: %#v", tc.r, cmds)
		}
		if cmds := m.Key(key(tcell.KeyRune, tc.r, tcell.ModAlt)); len(cmds) != 0 && cmds[0] != (cmdTyped{Session: s.ID}) {
			t.Fatalf("a second Alt-%c: %#v", tc.r, cmds)
		}
		if len(m.Composer) != 0 {
			t.Fatalf("the key typed %q", string(m.Composer))
		}
		if r := screen(t, m); !contains(r, tc.word) {
			t.Fatalf("on its way:\n%s", strings.Join(r, "\n"))
		}
		m.Result(resDecided{cmdDecide: want})
		m.Item(s.ID, itemEvent(approval(4, "c1", tc.decision, "owner", "")))
		if r := screen(t, m); contains(r, "waits for your decision") || contains(r, tc.word) || !contains(r, "by owner") {
			t.Fatalf("decided:\n%s", strings.Join(r, "\n"))
		}
	}
}

// Several calls of one response are decided one after the other, in
// order; the slash commands decide as the keys do, a denial with its
// reason.
func TestDecisionsInOrder(t *testing.T) {
	t.Parallel()
	m, s := decider(t)
	m.Item(s.ID, itemEvent(askCall(4, "c2", "bot:example/echo")))
	if r := screen(t, m); !contains(r, "word_count waits for your decision (1 of 2)") {
		t.Fatalf("two waiting:\n%s", strings.Join(r, "\n"))
	}
	if cmds := m.Key(key(tcell.KeyRune, 'y', tcell.ModAlt)); len(cmds) != 1 || cmds[0].(cmdDecide).CallID != "c1" {
		t.Fatalf("first: %#v", cmds)
	}
	if r := screen(t, m); !contains(r, "echo waits for your decision (2 of 2)") {
		t.Fatalf("the second next:\n%s", strings.Join(r, "\n"))
	}
	cmds := runLine(m, "/deny not that one")
	if want := (cmdDecide{Session: s.ID, CallID: "c2", Tool: "bot:example/echo", Decision: wire.Decision{Decision: wire.DecisionDeny, Reason: "not that one"}}); len(cmds) != 1 || cmds[0] != want {
		t.Fatalf("/deny: %#v", cmds)
	}
	if cmds := runLine(m, "/always"); cmds != nil || !strings.Contains(m.Notice, "no tool call waits") {
		t.Fatalf("/always with nothing left: %#v %q", cmds, m.Notice)
	}
	// Alt-Y answers no question: a session asked about is not deleted.
	runLine(m, "/delete")
	if cmds := m.Key(key(tcell.KeyRune, 'y', tcell.ModAlt)); cmds != nil || m.asking != nil {
		t.Fatalf("Alt-Y to a question: %#v", cmds)
	}
}

// Those who may not decide are offered no keys: a member with read
// access, a viewer's read-only view, a guest (a write link's, who may
// write but not decide). Alt-Y types nothing and sends nothing; the
// block still says the call waits.
func TestNoDecisionKeysForReaders(t *testing.T) {
	t.Parallel()
	for _, setup := range []func(m *Model, s *SessionView){
		func(_ *Model, s *SessionView) { s.Access = wire.AccessRead },
		func(m *Model, _ *SessionView) { m.ReadOnly = true },
		func(m *Model, _ *SessionView) { m.Conn.Role = wire.TokenGuest },
	} {
		m, s := decider(t)
		setup(m, s)
		r := screen(t, m)
		if contains(r, "Alt-Y") || !contains(r, "waiting for a decision") {
			t.Fatalf("a reader's screen:\n%s", strings.Join(r, "\n"))
		}
		for _, cmd := range m.Key(key(tcell.KeyRune, 'y', tcell.ModAlt)) {
			if _, ok := cmd.(cmdDecide); ok {
				t.Fatalf("a reader decided: %#v", cmd)
			}
		}
		if cmds := runLine(m, "/allow"); cmds != nil || !m.NoticeErr {
			t.Fatalf("/allow by a reader: %#v %q", cmds, m.Notice)
		}
	}
}

// A decision that lost (someone decided first) or was refused says so,
// and the call is no longer marked as decided here.
func TestDecisionRefused(t *testing.T) {
	t.Parallel()
	m, s := decider(t)
	cmd := m.Key(key(tcell.KeyRune, 'y', tcell.ModAlt))[0].(cmdDecide)
	m.Result(resDecided{cmdDecide: cmd, Err: &client.Error{Code: wire.CodeConflict, Message: "decided already"}})
	if !strings.Contains(m.Notice, "already decided") || m.NoticeErr || s.deciding["c1"] != "" {
		t.Fatalf("conflict: %q %v %v", m.Notice, m.NoticeErr, s.deciding)
	}
	cmd = m.Key(key(tcell.KeyRune, 'n', tcell.ModAlt))[0].(cmdDecide)
	m.Result(resDecided{cmdDecide: cmd, Err: &client.Error{Code: wire.CodeForbidden, Message: "no"}})
	if !strings.Contains(m.Notice, "owners and members with write access") || !m.NoticeErr {
		t.Fatalf("forbidden: %q", m.Notice)
	}
	if r := screen(t, m); !contains(r, "waits for your decision") {
		t.Fatalf("the bar after a refusal:\n%s", strings.Join(r, "\n"))
	}
}

// A call found waiting in the history a reattach brings prompts as one
// that came live does, without a notification (it is not news); one
// older than that history is asked of the daemon and prompts too.
func TestPendingCallFoundOnReattach(t *testing.T) {
	t.Parallel()
	m := demo()
	m.TermFocused = false
	s := m.Sessions[0]
	s.Access = wire.AccessCreator
	m.Item(s.ID, itemReset(3))
	m.Item(s.ID, itemEvent(msg(1, "user", "ann", "count")))
	if cmds := m.Item(s.ID, itemEvent(askCall(3, "c1", "bot:b/t"))); cmds != nil {
		t.Fatalf("history notified: %#v", cmds)
	}
	m.Item(s.ID, itemStatus(wire.StatusPush{Phase: wire.PhaseApproval, TurnID: "t2", Pending: 1}))
	if r := screen(t, m); !contains(r, "bot:b/t waits for your decision") {
		t.Fatalf("after the reattach:\n%s", strings.Join(r, "\n"))
	}

	m.Item(s.ID, itemReset(9))
	cmds := m.Item(s.ID, itemEvent(msg(9, "user", "ann", "queued behind it")))
	cmds = append(cmds, m.Item(s.ID, itemStatus(wire.StatusPush{Phase: wire.PhaseApproval, TurnID: "t2", Pending: 1}))...)
	if len(cmds) != 1 || cmds[0] != (cmdApprovals{Session: s.ID}) {
		t.Fatalf("a call older than the history: %#v", cmds)
	}
	if cmds := m.Item(s.ID, itemStatus(wire.StatusPush{Phase: wire.PhaseApproval, TurnID: "t2", Pending: 1})); cmds != nil {
		t.Fatalf("asked again: %#v", cmds)
	}
	m.Result(resApprovals{Session: s.ID, List: wire.Approvals{Approvals: []wire.Approval{{CallID: "c0", Tool: "bot:b/old"}}}})
	if r := screen(t, m); !contains(r, "bot:b/old waits for your decision") {
		t.Fatalf("the call listed:\n%s", strings.Join(r, "\n"))
	}
	if cmds := m.Key(key(tcell.KeyRune, 'y', tcell.ModAlt)); len(cmds) != 1 || cmds[0].(cmdDecide).CallID != "c0" {
		t.Fatalf("deciding it: %#v", cmds)
	}
	m.Item(s.ID, itemEvent(approval(10, "c0", wire.DecisionAllow, "owner", "")))
	if r := screen(t, m); contains(r, "waits for your decision") {
		t.Fatalf("after its approval:\n%s", strings.Join(r, "\n"))
	}
}

// A call that asks, in a session not in front of the person, rings and
// asks for a desktop notification, once for a response's calls; so does
// a session the feed alone follows entering phase approval. Not for
// those who may not decide, nor with /notify off.
func TestNotifyDecisionNeeded(t *testing.T) {
	t.Parallel()
	m := demo()
	bg := m.Sessions[1]
	bg.Access = wire.AccessWrite
	m.Item(bg.ID, itemStatus(wire.StatusPush{Phase: wire.PhaseRunning}))
	cmds := m.Item(bg.ID, itemEvent(askCall(5, "c1", "bot:b/t")))
	if len(cmds) != 1 || cmds[0] != (cmdNotify{Title: "albedo: notes", Body: "decision needed: bot:b/t"}) {
		t.Fatalf("a call elsewhere: %#v", cmds)
	}
	if cmds := m.Item(bg.ID, itemEvent(askCall(6, "c2", "bot:b/t"))); cmds != nil {
		t.Fatalf("the second call of the response: %#v", cmds)
	}
	front := m.Sessions[0]
	front.Access = wire.AccessWrite
	if cmds := m.Item(front.ID, itemEvent(askCall(7, "c3", "bot:b/t"))); cmds != nil {
		t.Fatalf("in front: %#v", cmds)
	}

	f := NewModel(90, 20)
	item := func(id string, phase wire.Phase, access wire.Access) wire.FeedItem {
		return wire.FeedItem{ID: id, Title: id, At: t0, Phase: phase, Access: access}
	}
	f.Feed(client.FeedUpdate{Start: true, Sessions: []wire.FeedItem{item("a", wire.PhaseIdle, wire.AccessCreator),
		item("b", wire.PhaseApproval, wire.AccessCreator), item("c", wire.PhaseRunning, wire.AccessRead)}})
	cmds = f.Feed(client.FeedUpdate{Sessions: []wire.FeedItem{item("b", wire.PhaseApproval, wire.AccessCreator),
		item("c", wire.PhaseApproval, wire.AccessRead), item("d", wire.PhaseApproval, wire.AccessCreator)}})
	if cmds != nil {
		t.Fatalf("already waiting, a reader's, new: %#v", cmds)
	}
	f.setFocus(sessionIndex(f, "d"))
	cmds = f.Feed(client.FeedUpdate{Sessions: []wire.FeedItem{item("a", wire.PhaseApproval, wire.AccessCreator)}})
	if len(cmds) != 1 || cmds[0] != (cmdNotify{Title: "albedo: a", Body: "a tool call waits for your decision"}) {
		t.Fatalf("a session the feed follows: %#v", cmds)
	}
	if r := screen(t, f); !contains(r, "? a") {
		t.Fatalf("its mark:\n%s", strings.Join(r, "\n"))
	}
	f.Quiet = true
	f.Feed(client.FeedUpdate{Sessions: []wire.FeedItem{item("a", wire.PhaseRunning, wire.AccessCreator)}})
	if cmds := f.Feed(client.FeedUpdate{Sessions: []wire.FeedItem{item("a", wire.PhaseApproval, wire.AccessCreator)}}); cmds != nil {
		t.Fatalf("quiet: %#v", cmds)
	}
}

func sessionIndex(m *Model, id string) int {
	for i, s := range m.Sessions {
		if s.ID == id {
			return i
		}
	}
	return -1
}

// While the turn waits for a decision, the reply that restarted empty
// shows nothing: the call is the last thing in the transcript.
func TestNoEmptyReplyWhileWaiting(t *testing.T) {
	t.Parallel()
	m, s := decider(t)
	m.Item(s.ID, client.Item{Frame: wire.Frame{Op: wire.PushPartial, Text: &wire.TextPush{TurnID: "t2", Text: ""}}})
	if r := screen(t, m); contains(r, "…") {
		t.Fatalf("an empty reply shows:\n%s", strings.Join(r, "\n"))
	}
	m.Item(s.ID, itemEvent(approval(4, "c1", wire.DecisionAllow, "owner", "")))
	m.Item(s.ID, itemStatus(wire.StatusPush{Phase: wire.PhaseRunning, TurnID: "t2", Model: "m1"}))
	if r := screen(t, m); !contains(r, "assistant · m1 …") {
		t.Fatalf("the next response streams:\n%s", strings.Join(r, "\n"))
	}
}

// The kept lines, drawn event by event as calls are made, decided and
// answered, always equal those of the whole log drawn at once.
func TestToolBlocksMatchAFreshRendering(t *testing.T) {
	t.Parallel()
	evs := []wire.Event{msg(1, "user", "ann", "go"), askCall(2, "a", "bot:b/one"), askCall(3, "b", "bot:b/two"),
		approval(4, "b", wire.DecisionDeny, "ann", "no"), approval(5, "a", wire.DecisionAllow, "ann", ""),
		toolResult(6, "b", wire.ToolDenied, "", "denied by ann"), toolResult(7, "a", wire.ToolCompleted, strings.Repeat("out\n", 30), ""),
		msg(8, "assistant", "m1", "done")}
	s := &SessionView{ID: "s"}
	for i, ev := range evs {
		s.Events = append(s.Events, ev)
		s.calls.add(ev)
		for _, w := range []int{40, 70} {
			o := look{width: w}
			got := s.window(o, 0, s.lineCount(o))
			fresh := &SessionView{ID: "s", Events: s.Events}
			fresh.calls.rebuild(s.Events)
			if want := fresh.window(o, 0, fresh.lineCount(o)); !reflect.DeepEqual(got, want) {
				t.Fatalf("after event %d at width %d:\n%s\nwant\n%s", i, w, texts(got), texts(want))
			}
		}
	}
}

// Ctrl-Y picks a tool call as it picks messages: Enter copies its
// arguments while it runs or waits, its output once it has one.
func TestCopyAToolCall(t *testing.T) {
	t.Parallel()
	m, s := decider(t)
	m.Key(key(tcell.KeyCtrlY, 0, tcell.ModCtrl))
	if m.pick == nil || s.Events[m.pick.event].Type != wire.EventToolCall {
		t.Fatalf("pick %+v", m.pick)
	}
	if cmds := m.Key(key(tcell.KeyEnter, 0, 0)); len(cmds) != 1 || cmds[0] != (cmdCopy{Text: `{"text":"one two three"}`}) ||
		!strings.Contains(m.Notice, "the call's arguments") {
		t.Fatalf("Enter on a waiting call copied %#v (%q)", cmds, m.Notice)
	}
	m.Item(s.ID, itemEvent(approval(4, "c1", wire.DecisionAllow, "bob", "")))
	m.Item(s.ID, itemEvent(toolResult(5, "c1", wire.ToolCompleted, "3 words", "")))
	m.Key(key(tcell.KeyCtrlY, 0, tcell.ModCtrl))
	if cmds := m.Key(key(tcell.KeyEnter, 0, 0)); len(cmds) != 1 || cmds[0] != (cmdCopy{Text: "3 words"}) ||
		!strings.Contains(m.Notice, "the tool's output") {
		t.Fatalf("Enter on an ended call copied %#v (%q)", cmds, m.Notice)
	}
	m.Key(key(tcell.KeyCtrlY, 0, tcell.ModCtrl))
	m.Key(key(tcell.KeyUp, 0, 0))
	if cmds := m.Key(key(tcell.KeyEnter, 0, 0)); len(cmds) != 1 || cmds[0] != (cmdCopy{Text: "an earlier answer"}) {
		t.Fatalf("Up past the call copied %#v", cmds)
	}
	// f on a call forks at the close of its turn, the call whole.
	m.Item(s.ID, itemEvent(wire.Event{Offset: 6, Type: wire.EventMessage, Role: wire.RoleAssistant, TurnID: "t2", Text: "Three.", At: t0}))
	m.Item(s.ID, itemEvent(wire.Event{Offset: 7, Type: wire.EventTurn, TurnID: "t2", State: wire.TurnCompleted, At: t0}))
	m.Key(key(tcell.KeyCtrlY, 0, tcell.ModCtrl))
	m.Key(key(tcell.KeyUp, 0, 0))
	if cmds := m.Key(key(tcell.KeyRune, 'f', 0)); len(cmds) != 1 || cmds[0].(cmdFork).Req.At != 7 {
		t.Fatalf("f on the call: %#v", cmds)
	}
}
