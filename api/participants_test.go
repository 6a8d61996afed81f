package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"albedo/hub"
	"albedo/hub/provider"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// participantsEnv is a daemon with two OpenAI-compatible profiles, first
// (the default) and second, each its own fake.
func participantsEnv(t *testing.T, rules ...provider.ToolRule) (*env, *fakeopenai.Server, *fakeopenai.Server) {
	t.Helper()
	return participantsEnvWith(t, hub.Options{}, rules...)
}

// participantsEnvWith is participantsEnv with the hub's options o.
func participantsEnvWith(t *testing.T, o hub.Options, rules ...provider.ToolRule) (*env, *fakeopenai.Server, *fakeopenai.Server) {
	t.Helper()
	var fakes [2]*fakeopenai.Server
	for i := range fakes {
		f, err := fakeopenai.Start()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		fakes[i] = f
	}
	reg, err := provider.NewRegistry(provider.Config{DefaultProvider: "first", Tools: provider.ToolsConfig{Rules: rules}, Providers: map[string]provider.Profile{
		"first":  {BaseURL: fakes[0].URL, DefaultModel: "m1"},
		"second": {BaseURL: fakes[1].URL, DefaultModel: "m2"},
	}}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	o.Providers = reg
	return newEnvWith(t, Options{}, o), fakes[0], fakes[1]
}

// patch PATCHes session with body at its current ETag.
func (e *env) patch(session, body string) (int, wire.Session, wire.ErrorBody) {
	e.t.Helper()
	var s wire.Session
	e.do("GET", "/v1/sessions/"+session, nil, "", &s)
	// One request: its body is the session, or an error body.
	var out struct {
		wire.Session
		wire.ErrorBody
	}
	code, _ := e.do("PATCH", "/v1/sessions/"+session, map[string]string{"If-Match": s.ETag}, body, &out)
	return code, out.Session, out.ErrorBody
}

// A team's session with two profiles and a bot, answering mentions only:
// people talk and no turn starts; @second runs the second profile;
// "@first @second" runs both, in order, the second seeing the first's
// reply as a message of "first"'s; @helper runs the bot. Each reply is
// authored by its participant, and usage by participant sums each one's.
func TestParticipantsAnswerWhenMentioned(t *testing.T) {
	t.Parallel()
	e, first, second := participantsEnv(t)
	tok := e.botToken("helper")
	e.create("s")
	code, s, eb := e.patch("s", `{"participants":["second","bot:helper"],"respond":"mentions"}`)
	if code != http.StatusOK || strings.Join(s.Participants, ",") != "second,bot:helper" || s.Respond != wire.RespondMentions {
		t.Fatalf("patch: %d %+v %+v", code, s, eb.Error)
	}
	w := e.dial(true).HelloFromStart(s)

	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"hello team, mail me at a@second.org"}`, &r)
	if r.Delivery != wire.DeliveryDone || r.TurnID != "" {
		t.Fatalf("a message that mentions no one: %+v", r)
	}

	e.do("PUT", inputPath("s", 2), nil, `{"text":"@second what do you think?"}`, &r)
	if text := replyOf(w, r.TurnID); !strings.HasPrefix(text, "fake: ") {
		t.Fatalf("second's reply %q", text)
	}

	first.Push(fakeopenai.Reply{Chunks: []string{"first says yes"}})
	second.Push(fakeopenai.Reply{Chunks: []string{"second says no"}})
	e.do("PUT", inputPath("s", 3), nil, `{"text":"@first @second compare"}`, &r)
	// The two turns, in order: the first under the input's turn id.
	var turns []string
	for len(turns) < 2 {
		f := w.Next(func(f wire.Frame) bool {
			return f.Op == wire.PushEvent && f.Event.Type == wire.EventTurn && f.Event.InputID == r.InputID && f.Event.State != wire.TurnStarted
		})
		turns = append(turns, f.Event.TurnID)
	}
	if turns[0] != r.TurnID || turns[1] == r.TurnID {
		t.Fatalf("the turns %v of the receipt's %s", turns, r.TurnID)
	}

	e.do("PUT", inputPath("s", 4), nil, `{"text":"@Helper, your view?"}`, &r)
	b := e.dialToken(tok)
	b.Hello()
	b.Send(wire.Command{ID: 1, Op: wire.OpServe})
	push := b.Next(func(f wire.Frame) bool { return f.Op == wire.PushTurn })
	if n := len(push.Turn.Messages); n == 0 || push.Turn.Messages[n-1].Text != "@Helper, your view?" {
		t.Fatalf("the bot's turn %+v", push.Turn)
	}
	b.Send(wire.Command{ID: 2, Op: wire.OpReply, TurnID: r.TurnID, Text: "a bot's view", Done: true})
	if text := replyOf(w, r.TurnID); text != "a bot's view" {
		t.Fatalf("the bot's reply %q", text)
	}

	var got []string
	for _, ev := range e.events("s") {
		switch {
		case ev.Type == wire.EventMessage:
			got = append(got, fmt.Sprintf("%s/%s/%s: %.20s", ev.Role, ev.Author, ev.AuthorID, ev.Text))
		case ev.Type == wire.EventTurn && ev.State == wire.TurnStarted:
			got = append(got, "turn of "+ev.Author)
		}
	}
	want := []string{
		"user/user/owner: hello team, mail me ",
		"user/user/owner: @second what do you ",
		"turn of second",
		"assistant/second/provider:second: fake: @second what d",
		"user/user/owner: @first @second compa",
		"turn of first",
		"assistant/first/provider:first: first says yes",
		"turn of second",
		"assistant/second/provider:second: second says no",
		"user/user/owner: @Helper, your view?",
		"turn of helper",
		"assistant/helper/bot:helper: a bot's view",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// What second was sent at its last turn: its own reply as its own,
	// first's as a message named "first", the people's named.
	reqs := second.Requests()
	last := reqs[len(reqs)-1]
	var names []string
	for i := range last.Messages {
		if m, ok := last.UserMessage(i); ok {
			names = append(names, m.Name+": "+m.Text)
		}
	}
	told := strings.Join(names, "\n")
	if !strings.Contains(told, "first: first says yes") || !strings.Contains(told, "user: @first @second compare") ||
		strings.Contains(told, "fake: @second") || len(first.Requests()) != 1 {
		t.Fatalf("second was told:\n%s\n(first had %d requests)", told, len(first.Requests()))
	}

	var rep wire.UsageReport
	if code, _ := e.do("GET", "/v1/usage?by=participant", nil, "", &rep); code != 200 {
		t.Fatalf("usage by participant: %d", code)
	}
	turnsOf := map[string]int64{}
	for _, u := range rep.Totals {
		turnsOf[u.Key] = u.Turns
	}
	if turnsOf["first"] != 1 || turnsOf["second"] != 2 || turnsOf["bot:helper"] != 1 {
		t.Fatalf("usage by participant: %+v", rep.Totals)
	}
}

// Participants are checked: an unknown profile, a bot with no token,
// names that collide, a respond that is no mode; too many mentions start
// max_mention_turns turns, and the log says why not the rest. A fork
// keeps the participants and the mode.
func TestParticipantsAreCheckedAndBounded(t *testing.T) {
	t.Parallel()
	e, _, _ := participantsEnvWith(t, hub.Options{MaxMentionTurns: 1})
	e.create("s")
	for _, c := range []struct{ body, want string }{
		{`{"participants":["nope"]}`, "no provider profile"},
		{`{"participants":["bot:ghost"]}`, "has no token"},
		{`{"participants":["second","second"]}`, "names the provider or another participant"},
		{`{"participants":["first"]}`, "names the provider"},
		{`{"respond":"sometimes"}`, `respond is "always" or "mentions"`},
	} {
		if code, _, eb := e.patch("s", c.body); code != http.StatusBadRequest || !strings.Contains(eb.Error.Message, c.want) {
			t.Errorf("%s: %d %+v", c.body, code, eb.Error)
		}
	}
	if code, _, eb := e.patch("s", `{"participants":["second"],"respond":"mentions"}`); code != 200 {
		t.Fatalf("patch: %d %+v", code, eb.Error)
	}
	var b strings.Builder
	for range 1000 {
		b.WriteString("@second @first @nobody ")
	}
	w := e.dial(true).HelloFromStart(e.sessionOf("s"))
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, fmt.Sprintf(`{"text":%q}`, b.String()), &r)
	ends := 0
	for ends < 1 {
		f := w.Next(func(f wire.Frame) bool {
			return f.Op == wire.PushEvent && f.Event.Type == wire.EventTurn && f.Event.State != wire.TurnStarted
		})
		if f.Event.InputID == r.InputID {
			ends++
		}
	}
	var turns int
	for _, ev := range e.events("s") {
		if ev.Type == wire.EventTurn && ev.State == wire.TurnStarted {
			turns++
		}
	}
	if turns != 1 {
		t.Fatalf("%d turns for a message mentioning two participants a thousand times, at most 1 a message", turns)
	}
	if evs := e.events("s"); !slices.ContainsFunc(evs, func(ev wire.Event) bool {
		return ev.Type == wire.EventNotice && ev.InputID == r.InputID && strings.Contains(ev.Text, "1 more mentioned participants were not asked: a message starts at most 1 turns (max_mention_turns)")
	}) {
		t.Fatalf("no notice of the mentions left out: %+v", evs)
	}

	// A bot's token revoked after it was named: its mention starts no
	// turn, and the log says why.
	e.botToken("gone")
	if code, _, eb := e.patch("s", `{"participants":["second","bot:gone"]}`); code != 200 {
		t.Fatalf("patch: %d %+v", code, eb.Error)
	}
	if code, _ := e.do("DELETE", "/v1/bots/gone", nil, "", nil); code != 204 {
		t.Fatalf("revoke: %d", code)
	}
	e.do("PUT", inputPath("s", 2), nil, `{"text":"@gone @second hello"}`, &r) // @gone first: it takes no turn of the one
	for {
		f := w.Next(func(f wire.Frame) bool {
			return f.Op == wire.PushEvent && f.Event.Type == wire.EventTurn && f.Event.State != wire.TurnStarted
		})
		if f.Event.InputID == r.InputID {
			break
		}
	}
	var notice string
	turns = 0
	for _, ev := range e.events("s") {
		if ev.InputID == r.InputID && ev.Type == wire.EventNotice {
			notice = ev.Text
		}
		if ev.InputID == r.InputID && ev.Type == wire.EventTurn && ev.State == wire.TurnStarted {
			turns++
		}
	}
	if turns != 1 || !strings.Contains(notice, "@gone may no longer answer here") {
		t.Fatalf("a revoked bot's mention: %d turns, notice %q", turns, notice)
	}

	code, _, _ := e.patch("s", `{"participants":["second"]}`)
	if code != 200 {
		t.Fatalf("the same participants again: %d", code)
	}
	fork, _ := e.forkOf("s", `{"at":1}`, 201)
	if strings.Join(fork.Participants, ",") != "second" || fork.Respond != wire.RespondMentions {
		t.Fatalf("the fork's participants %v and respond %q", fork.Participants, fork.Respond)
	}
}

// A session shared for writing answers mentions only, unless someone
// chose: the grant's settings event says so, and the mode chosen before
// a grant stays.
func TestASharedSessionAnswersMentions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("a")
	e.create("b")
	e.member("ann", false)
	if code, _, _ := e.patch("b", `{"respond":"always"}`); code != 200 {
		t.Fatal("respond always")
	}
	e.grant("a", "ann", wire.AccessWrite)
	e.grant("b", "ann", wire.AccessWrite)
	for id, want := range map[string]string{"a": wire.RespondMentions, "b": wire.RespondAlways} {
		if s := e.sessionOf(id); s.Respond != want {
			t.Errorf("session %s answers %q, want %q", id, s.Respond, want)
		}
	}
	if evs := e.events("a"); len(evs) != 1 || evs[0].Type != wire.EventSettings || evs[0].Respond == nil || *evs[0].Respond != wire.RespondMentions {
		t.Fatalf("a's log %+v", evs)
	}
}

// sessionOf reads a session.
func (e *env) sessionOf(id string) wire.Session {
	e.t.Helper()
	var s wire.Session
	if code, _ := e.do("GET", "/v1/sessions/"+id, nil, "", &s); code != 200 {
		e.t.Fatalf("GET session %s: %d", id, code)
	}
	return s
}

// Each participant's tool calls are its own: authored by it, and decided
// by the rules that name it as well as those that name no one.
func TestParticipantsCallToolsUnderTheirOwnRules(t *testing.T) {
	t.Parallel()
	e, first, second := participantsEnv(t, provider.ToolRule{Match: "bot:weather/*", Policy: "allow", Participant: "second"})
	bot := e.toolBot("weather", forecastTool)
	e.create("s")
	if code, _, eb := e.patch("s", `{"participants":["second"]}`); code != 200 {
		t.Fatalf("patch: %d %+v", code, eb.Error)
	}
	w := e.dial(true).HelloFromStart(e.sessionOf("s"))
	call := fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{ID: "c", Name: "bot__weather__forecast", Arguments: `{"city":"Oslo"}`}}}
	second.Push(call)
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"@second the weather?"}`, &r)
	push := bot.Next(func(f wire.Frame) bool { return f.Op == wire.PushTool })
	bot.Send(wire.Command{ID: 9, Op: wire.OpToolResult, CallID: push.Tool.CallID, Output: "cold"})
	calls, _ := e.turnEvents(w, "s", r.TurnID)
	for _, c := range calls {
		if ev := c[wire.EventToolCall]; ev.Author != "second" || ev.AuthorID != "provider:second" || ev.Policy != wire.PolicyAllow {
			t.Fatalf("second's call %+v", ev)
		}
	}
	first.Push(call)
	e.do("PUT", inputPath("s", 2), nil, `{"text":"and you, @first?"}`, &r)
	if ap := e.waitApproval(w, "s", 1)[0]; ap.Tool != "bot:weather/forecast" {
		t.Fatalf("first's call, asking: %+v", ap)
	}
}

// A person's quiet message (one that starts no turn) sent again with the
// same input_id is answered with its receipt, as any input is, and with
// other text is a conflict; it is written once.
func TestARepeatedQuietMessageIsItsReceipt(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	ann := e.member("ann", false)
	e.grant("s", "ann", wire.AccessWrite) // the session now answers mentions only
	path := "/v1/sessions/s/inputs/" + newUUID()
	var first, again wire.Receipt
	if code, _ := e.do("PUT", path, e.as(ann.Token), `{"text":"no one named"}`, &first); code != http.StatusAccepted {
		t.Fatalf("input: %d", code)
	}
	if code, _ := e.do("PUT", path, e.as(ann.Token), `{"text":"no one named"}`, &again); code != http.StatusAccepted || again != first {
		t.Fatalf("the repeat: %d %+v, first %+v", code, again, first)
	}
	var er wire.ErrorBody
	if code, _ := e.do("PUT", path, e.as(ann.Token), `{"text":"other"}`, &er); code != http.StatusConflict || er.Error.Code != wire.CodeConflict {
		t.Fatalf("other text: %d %+v", code, er)
	}
	n := 0
	for _, ev := range e.events("s") {
		if ev.Type == wire.EventMessage {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d messages, want 1", n)
	}
}
