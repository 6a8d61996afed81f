package acphost

import (
	"context"
	"encoding/json"
	"testing"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"

	"albedo/wire"
)

// FuzzSessionUpdate feeds a turn an agent's session/update, as the SDK
// decodes it from the agent's bytes: whatever it holds, what the turn
// keeps of it is bounded and valid, and nothing panics.
func FuzzSessionUpdate(f *testing.F) {
	for _, s := range []string{
		`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending"}]}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"Edit","kind":"edit","status":"in_progress","locations":[{"path":"/w/a","line":2}],"content":[{"type":"diff","path":"/w/a","oldText":"a\n","newText":"b\n"}]}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed","content":[{"type":"content","content":{"type":"text","text":"ok"}},{"type":"terminal","terminalId":"t"}]}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"d","title":"x","rawInput":[1,2,3],"status":"failed"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var n acp.SessionNotification
		if json.Unmarshal(b, &n) != nil {
			return
		}
		r := &recorder{}
		a := newAgent(New(nil, nil), Turn{Session: "s", Config: config("1"), Workspace: "/w"}, "k")
		ts := newTurnState(a, Turn{Session: "s", Config: a.cfg, Workspace: "/w", Sink: r}, context.Background())
		ts.update(n.Update)
		ts.update(n.Update)
		ts.finish(context.Background(), wire.ToolCompleted, "")
		ts.text.close()
		if len(r.plan) > wire.MaxPlanEntries {
			t.Fatalf("%d plan entries", len(r.plan))
		}
		for _, c := range r.calls {
			if len(c.Title) > wire.MaxToolTitleBytes || len(c.Locations) > wire.MaxToolLocations || len(c.Arguments) > maxArgumentBytes ||
				!json.Valid(c.Arguments) || c.Arguments[0] != '{' || !utf8.ValidString(c.Title) {
				t.Fatalf("call %+v", c)
			}
			if len(c.Diff) > wire.MaxToolDiffBytes+200 {
				t.Fatalf("diff of %d bytes", len(c.Diff))
			}
		}
		if len(r.results) > len(r.calls) {
			t.Fatalf("%d results of %d calls", len(r.results), len(r.calls))
		}
	})
}
