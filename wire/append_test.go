package wire

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// appendEventOrPanic returns AppendEvent's bytes, or whether it panicked.
func appendEventOrPanic(dst []byte, ev *Event) (out []byte, panicked bool) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	return AppendEvent(dst, ev), false
}

// checkEvent holds AppendEvent to json.Marshal: the same bytes, appended
// after what dst held, or a panic where Marshal fails.
func checkEvent(t testing.TB, ev Event) {
	t.Helper()
	want, err := json.Marshal(ev)
	prefix := []byte("prefix")
	got, panicked := appendEventOrPanic(bytes.Clone(prefix), &ev)
	if err != nil {
		if !panicked {
			t.Fatalf("AppendEvent(%#v) = %s; json.Marshal failed (%v), so it should panic", ev, got, err)
		}
		return
	}
	if panicked {
		t.Fatalf("AppendEvent(%#v) panicked; json.Marshal gave %s", ev, want)
	}
	if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], want) {
		t.Fatalf("AppendEvent(%#v)\n got %s\nwant prefix%s", ev, got, want)
	}
}

func checkReceipt(t testing.TB, id int64, r Receipt) {
	t.Helper()
	want, err := json.Marshal(Reply{ID: id, OK: true, Receipt: &r})
	if err != nil {
		t.Fatal(err)
	}
	got := AppendReceiptReply([]byte("p"), id, &r)
	if !bytes.Equal(got[1:], want) || got[0] != 'p' {
		t.Fatalf("AppendReceiptReply(%d, %#v)\n got %s\nwant p%s", id, r, got, want)
	}
}

func ptr(s string) *string { return &s }

// escapes holds strings that every escape rule of encoding/json touches.
var escapes = []string{
	"", "plain", `"quoted" \ back`, "<script>&amp;</script>", "\x00\x01\x1f\x7f", "\b\f\n\r\t",
	"line\u2028para\u2029", "bad \xff utf8 \xc3", "é ü 日本 😀", "\xed\xa0\x80", "\u00a0\ufeff",
}

func TestAppendEventIsMarshal(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 51, 56, 123456780, time.UTC)
	base := []Event{
		{Offset: 1, Type: EventMessage, At: at, Role: RoleBot, Author: "bench", Text: "hello", InputID: "0193-…"},
		{Offset: 2, Type: EventMessage, At: at, Role: RoleAssistant, Author: "m", Text: "the rest", InputID: "i", TurnID: "t2", State: MessageComplete, Continues: 1},
		{Offset: 7, Type: EventTurn, At: at, InputID: "i", TurnID: "t", State: TurnInterrupted, Reason: ReasonUser, Error: "boom"},
		{Offset: 8, Type: EventTurn, At: at, TurnID: "t", State: TurnCompleted, Usage: json.RawMessage(`{"input_tokens":3}`), Context: 1234},
		{Offset: 9, Type: EventSettings, At: at, Title: ptr(""), Model: ptr("m"), By: "owner"},
		{Offset: 9, Type: EventSettings, At: at, Effort: ptr("high")},
		{Offset: 10, Type: EventSettings, At: at, Archived: new(true), By: "ann"},
		{Offset: 11, Type: EventSettings, At: at, Archived: new(false)},
		{Offset: 12, Type: EventSettings, At: at, Temperature: new(0.7), By: "ann"},
		{Offset: 12, Type: EventSettings, At: at, Temperature: new(-1.0)},
		{Offset: 12, Type: EventSettings, At: at, Temperature: new(1e-7)},
		{Offset: 12, Type: EventCompaction, At: at, Author: "m", Text: "summary", From: 1, To: 10, By: "albedo"},
		{Offset: 12, Type: EventCompaction, At: at, From: math.MinInt64, To: -1},
		{Offset: 13, Type: EventToolCall, At: at, TurnID: "t", CallID: "c1", Tool: "bot:b/t", Arguments: CompactJSON([]byte(`{ "q": "<a&b>" }`)), Policy: PolicyAsk, Author: "m", Text: "looking"},
		{Offset: 14, Type: EventApproval, At: at, TurnID: "t", CallID: "c1", Decision: DecisionAllowSession, Author: "ann", AuthorID: "m1", Reason: "ok"},
		{Offset: 15, Type: EventToolResult, At: at, TurnID: "t", CallID: "c1", State: ToolFailed, Text: "out", Error: "boom"},
		{Offset: 16, Type: EventToolCall, At: at, CallID: "c2", Tool: "acp:edit", Title: ptr("Edit <a>"), Policy: PolicyAsk,
			Locations: []ToolLocation{{Path: "/w/a&b.go", Line: func() *int { l := 3; return &l }()}, {Path: "/w/c"}}, Diff: "--- a/x\n+++ b/x\n-<old>\n+new\n",
			Attachments: []Attachment{{SHA256: strings.Repeat("a", 64), Name: "shot <1>.png", MIME: "image/png", Size: 1234}}},
		{Offset: 17, Type: EventNotice, At: at, CallID: "c2", Text: "The agent's request was answered “Allow” (allow_once)."},
		{},
		{Offset: -1, Type: "x", At: time.Time{}},
		{Offset: math.MaxInt64, At: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("", 23*3600+59*60))},
		{Offset: math.MinInt64, At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", -(5*3600+30*60)))},
		{At: time.Date(2026, 1, 2, 3, 4, 5, 100, time.Local)},
		// Encode refuses these, so AppendEvent panics.
		{At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{At: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600))},
		{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", -100*3600))},
	}
	for _, ev := range base {
		checkEvent(t, ev)
	}
	for _, s := range escapes {
		checkEvent(t, Event{Offset: 3, Type: EventType(s), At: at, Role: Role(s), Author: s, Text: s, InputID: s,
			TurnID: s, State: s, Reason: s, Error: s, Title: &s, Model: &s, Effort: &s, Tools: &s, By: s,
			CallID: s, Tool: s, Policy: s, Decision: s, Arguments: CompactJSON(Encode(s)), Locations: []ToolLocation{{Path: s}}, Diff: s, Attachments: []Attachment{{SHA256: s, Name: s, MIME: s, Size: int64(len(s))}}})
	}
}

func TestAppendReceiptReplyIsMarshal(t *testing.T) {
	checkReceipt(t, 1, Receipt{InputID: "i", Session: "s", State: ReceiptAccepted, Order: 3, Delivery: DeliveryQueued})
	checkReceipt(t, math.MaxInt64, Receipt{Order: math.MinInt64})
	checkReceipt(t, -5, Receipt{})
	for _, s := range escapes {
		checkReceipt(t, 42, Receipt{InputID: s, Session: s, State: s, Order: 1, Delivery: s, TurnID: s, Error: s})
	}
}

// FuzzAppendEvent holds AppendEvent to json.Marshal on arbitrary events.
func FuzzAppendEvent(f *testing.F) {
	for _, s := range escapes {
		f.Add(int64(1), "message", int64(1764500000), int64(5), 0, s, s, s, s, uint8(7))
	}
	f.Add(int64(-9), "turn", int64(253402300800), int64(0), 86400, "", "a<b", "", "x", uint8(0))
	f.Add(int64(0), "", int64(-62135596801), int64(999999999), -3600, "\u2028", "", "\xff", "", uint8(255))
	f.Fuzz(func(t *testing.T, off int64, typ string, sec, nsec int64, zone int, a, b, c, d string, mask uint8) {
		ev := Event{Offset: off, Type: EventType(typ), At: time.Unix(sec, nsec).In(time.FixedZone("", zone)),
			Role: Role(a), Author: b, Text: c, InputID: d, TurnID: a, State: b, Reason: c, Error: d, By: a}
		if mask&32 != 0 {
			ev.From, ev.To = off/2, off
		}
		for i, p := range []**string{&ev.Title, &ev.Model, &ev.Effort} {
			if mask&(1<<i) != 0 {
				*p = ptr([]string{a, b, c}[i])
			}
		}
		if mask&128 != 0 {
			ev.System, ev.Tools = ptr(d), ptr(c)
		}
		if mask&8 != 0 {
			ev.At = ev.At.UTC()
		}
		if mask&64 != 0 {
			ev.CallID, ev.Tool, ev.Policy, ev.Decision = a, b, c, d
			ev.Arguments = CompactJSON(Encode(map[string]string{a: b}))
			ev.Locations, ev.Diff = []ToolLocation{{Path: c, Line: &zone}, {Path: d}}, a
		}
		if mask&16 != 0 { // fields left empty: omitempty
			ev.Role, ev.Author, ev.TurnID, ev.Reason = "", "", "", ""
		}
		switch { // a closing turn event's usage, as SetUsage records it
		case mask&32 != 0:
			ev.SetUsage(nil)
		case mask&64 != 0:
			ev.SetUsage(&Usage{InputTokens: off, OutputTokens: sec, CachedTokens: &nsec})
			ev.Context = int(sec)
		}
		checkEvent(t, ev)
	})
}

// FuzzAppendReceiptReply holds AppendReceiptReply to json.Marshal.
func FuzzAppendReceiptReply(f *testing.F) {
	for _, s := range escapes {
		f.Add(int64(1), s, s, int64(2), s)
	}
	f.Fuzz(func(t *testing.T, id int64, a, b string, order int64, c string) {
		checkReceipt(t, id, Receipt{InputID: a, Session: b, State: c, Order: order, Delivery: a, TurnID: b, Error: c})
	})
}

func checkStatus(t testing.TB, p StatusPush) {
	t.Helper()
	want, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	got := AppendStatusPush([]byte("p"), &p)
	if !bytes.Equal(got[1:], want) || got[0] != 'p' {
		t.Fatalf("AppendStatusPush(%#v)\n got %s\nwant p%s", p, got, want)
	}
}

func TestAppendStatusPushIsMarshal(t *testing.T) {
	checkStatus(t, StatusPush{})
	checkStatus(t, StatusPush{Op: PushStatus, Session: "s", Phase: PhaseIdle, Head: 12, Viewers: 3})
	checkStatus(t, StatusPush{Op: PushStatus, Session: "s", Phase: PhaseRunning, TurnID: "t", Queued: 2, LastTurn: ptr("complete"),
		Model: "m", Effort: "high", ETag: "e", Head: math.MaxInt64, Viewers: -1, Pending: 4})
	checkStatus(t, StatusPush{Op: PushStatus, Session: "s", LastTurn: ptr(""), Head: math.MinInt64,
		Agent: &AgentStatus{Plan: []PlanEntry{{Content: "<a> & b"}}, Thought: "\u2028", Output: &ToolOutput{CallID: "c", Text: "\xff"}}})
	checkStatus(t, StatusPush{Agent: &AgentStatus{}})
	for _, s := range escapes {
		checkStatus(t, StatusPush{Op: Op(s), Session: s, Phase: Phase(s), TurnID: s, LastTurn: &s, Model: s, Effort: s, ETag: s})
	}
}

func FuzzAppendStatusPush(f *testing.F) {
	for _, s := range escapes {
		f.Add(s, s, int64(1), 2, 3, true, false)
	}
	f.Fuzz(func(t *testing.T, a, b string, head int64, viewers, pending int, last, agent bool) {
		p := StatusPush{Op: PushStatus, Session: a, Phase: Phase(b), TurnID: a, Queued: viewers, Model: b, Effort: a, ETag: b,
			Head: head, Viewers: viewers, Pending: pending}
		if last {
			p.LastTurn = &b
		}
		if agent {
			p.Agent = &AgentStatus{Thought: a, Output: &ToolOutput{CallID: b, Text: a}}
		}
		checkStatus(t, p)
	})
}

func TestSizesFitPlainFrames(t *testing.T) {
	x := strings.Repeat("x", 300)
	at := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.FixedZone("", -7*3600))
	for _, ev := range []Event{
		{Offset: math.MinInt64, Type: EventMessage, At: at, Role: RoleBot, Author: "bench", Text: x, InputID: "i"},
		{Offset: 1, Type: EventTurn, At: at, InputID: "i", TurnID: "t", State: TurnFailed, Reason: "r", Error: x},
		{Offset: 1, Type: EventSettings, At: at, Title: ptr(""), Model: ptr("m"), Effort: ptr(x), By: "b"},
	} {
		b := AppendEvent(make([]byte, 0, EventSize(&ev)), &ev)
		if n := EventSize(&ev); len(b) > n || n-len(b) > 32 {
			t.Errorf("EventSize %d for %d bytes: %s", n, len(b), b)
		}
	}
	r := Receipt{InputID: x, Session: "s", State: "st", Order: math.MinInt64, Delivery: "d", TurnID: "t", Error: x}
	b := AppendReceiptReply(make([]byte, 0, ReceiptReplySize(&r)), math.MinInt64, &r)
	if n := ReceiptReplySize(&r); len(b) > n || n-len(b) > 32 {
		t.Errorf("ReceiptReplySize %d for %d bytes: %s", n, len(b), b)
	}
	for _, p := range []StatusPush{
		{Op: PushStatus, Session: "s", Phase: PhaseRunning, TurnID: x, Queued: math.MinInt, LastTurn: ptr(x), Model: "m", Effort: "e", ETag: "t",
			Head: math.MinInt64, Viewers: math.MinInt, Pending: math.MinInt},
		{Op: PushStatus, Session: x, Head: math.MinInt64, Queued: math.MinInt, Viewers: math.MinInt, Pending: math.MinInt},
	} {
		b := AppendStatusPush(make([]byte, 0, StatusPushSize(&p)), &p)
		if n := StatusPushSize(&p); len(b) > n || n-len(b) > 32 {
			t.Errorf("StatusPushSize %d for %d bytes: %s", n, len(b), b)
		}
	}
}

var sinkBytes []byte

func benchEvent() Event {
	return Event{Offset: 123456, Type: EventMessage, At: time.Now(), Role: RoleBot, Author: "bench",
		Text: "a message of the load tool, about the size of a chat line", InputID: "019ad4a5-3c1b-7e2a-9f10-3a4b5c6d7e8f"}
}

func BenchmarkEncodeEvent(b *testing.B) {
	ev := benchEvent()
	b.ReportAllocs()
	for b.Loop() {
		sinkBytes = Encode(&ev)
	}
}

func BenchmarkAppendEvent(b *testing.B) {
	ev := benchEvent()
	b.ReportAllocs()
	for b.Loop() {
		sinkBytes = AppendEvent(make([]byte, 0, EventSize(&ev)), &ev)
	}
}

func benchReceipt() Receipt {
	return Receipt{InputID: "019ad4a5-3c1b-7e2a-9f10-3a4b5c6d7e8f", Session: "019ad4a5-0000-7000-8000-000000000001",
		State: ReceiptAccepted, Order: 77, Delivery: DeliveryDone}
}

func BenchmarkEncodeReceiptReply(b *testing.B) {
	r := benchReceipt()
	b.ReportAllocs()
	for b.Loop() {
		sinkBytes = Encode(Reply{ID: 99, OK: true, Receipt: &r})
	}
}

func BenchmarkAppendReceiptReply(b *testing.B) {
	r := benchReceipt()
	b.ReportAllocs()
	for b.Loop() {
		sinkBytes = AppendReceiptReply(make([]byte, 0, ReceiptReplySize(&r)), 99, &r)
	}
}

func benchStatus() StatusPush {
	return StatusPush{Op: PushStatus, Session: "019ad4a5-0000-7000-8000-000000000001", Phase: PhaseIdle, LastTurn: ptr("complete"),
		Model: "claude-sonnet", Effort: "medium", ETag: "3f2a9c", Head: 12345, Viewers: 18000}
}

func BenchmarkEncodeStatusPush(b *testing.B) {
	p := benchStatus()
	b.ReportAllocs()
	for b.Loop() {
		sinkBytes = Encode(p)
	}
}

func BenchmarkAppendStatusPush(b *testing.B) {
	p := benchStatus()
	b.ReportAllocs()
	for b.Loop() {
		sinkBytes = AppendStatusPush(make([]byte, 0, StatusPushSize(&p)), &p)
	}
}
