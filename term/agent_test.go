package term

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"albedo/wire"
)

// A coding agent's call is a block headed by its title, with the tool as
// a label, the files it touches and its diff in colour; the notice of how
// the agent was answered is a line of its own; the result's diff
// replaces the proposed one.
func TestAnAgentsCallShowsItsTitleFilesAndDiff(t *testing.T) {
	t.Parallel()
	m, s := decider(t)
	m.Resize(100, 40)
	title, line := "Edit a.txt", 3
	call := wire.Event{Offset: 5, Type: wire.EventToolCall, At: t0, TurnID: "t2", CallID: "a1", Tool: "acp:edit", Title: &title,
		Policy: wire.PolicyAsk, Author: "coder", Locations: []wire.ToolLocation{{Path: "/w/a.txt", Line: &line}},
		Diff: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old words\n+new words\n"}
	m.Item(s.ID, itemEvent(call))
	scr := drawn(t, m)
	r := rows(scr)
	for _, want := range []string{"⚙ Edit a.txt acp:edit · waiting for a decision", "▸ /w/a.txt:3", "@@ -1 +1 @@", "-old words", "+new words"} {
		if !contains(r, want) {
			t.Fatalf("screen lacks %q:\n%s", want, strings.Join(r, "\n"))
		}
	}
	if fg, _, _ := styleAt(t, scr, "+new words").Decompose(); fg != fgOf(stAdded) {
		t.Fatalf("an added line's colour: %v", fg)
	}
	if fg, _, _ := styleAt(t, scr, "-old words").Decompose(); fg != fgOf(stRemoved) {
		t.Fatalf("a removed line's colour: %v", fg)
	}
	m.Item(s.ID, itemEvent(approval(6, "a1", wire.DecisionAllow, "bob", "")))
	m.Item(s.ID, itemEvent(wire.Event{Offset: 7, Type: wire.EventNotice, At: t0, TurnID: "t2", CallID: "a1", Text: "The agent's request was answered “Allow” (allow_once)."}))
	res := toolResult(8, "a1", wire.ToolCompleted, "", "")
	res.Diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old words\n+newer words\n"
	m.Item(s.ID, itemEvent(res))
	r = screen(t, m)
	for _, want := range []string{"⚙ Edit a.txt acp:edit · completed", "✓ allowed by bob", "· The agent's request was answered “Allow” (allow_once).", "+newer words"} {
		if !contains(r, want) {
			t.Fatalf("after: screen lacks %q:\n%s", want, strings.Join(r, "\n"))
		}
	}
	if contains(r, "+new words") {
		t.Fatalf("the proposed diff shows beside the result's:\n%s", strings.Join(r, "\n"))
	}
}

// While its turn runs, the agent's plan shows below the transcript, its
// thinking folded to its last line (Ctrl-O shows all), and the output of
// the command it runs; when the turn ends they go.
func TestAnAgentsPlanThinkingAndOutputShowWhileItWorks(t *testing.T) {
	t.Parallel()
	m, s := decider(t)
	m.Resize(100, 40)
	agent := &wire.AgentStatus{
		Plan:    []wire.PlanEntry{{Content: "read the code", Status: "completed"}, {Content: "fix the bug", Status: "in_progress"}, {Content: "run the tests", Status: "pending"}},
		Thought: "first I look\nthen I fix",
		Output:  &wire.ToolOutput{CallID: "t1", Text: "ok  albedo/wire 0.2s\n"},
	}
	m.Item(s.ID, itemStatus(wire.StatusPush{Phase: wire.PhaseRunning, TurnID: "t2", Agent: agent}))
	r := screen(t, m)
	for _, want := range []string{"▤ plan", "● read the code", "◐ fix the bug", "○ run the tests", "✻ thinking: then I fix … (Ctrl-O shows all)", "│ ok  albedo/wire 0.2s"} {
		if !contains(r, want) {
			t.Fatalf("screen lacks %q:\n%s", want, strings.Join(r, "\n"))
		}
	}
	if contains(r, "first I look") {
		t.Fatalf("the thinking shows whole, folded:\n%s", strings.Join(r, "\n"))
	}
	m.Item(s.ID, itemStatus(wire.StatusPush{Phase: wire.PhaseIdle, Agent: &wire.AgentStatus{Plan: agent.Plan}}))
	if r := screen(t, m); contains(r, "▤ plan") || contains(r, "thinking") {
		t.Fatalf("after the turn:\n%s", strings.Join(r, "\n"))
	}
}

func fgOf(st tcell.Style) tcell.Color {
	fg, _, _ := st.Decompose()
	return fg
}
