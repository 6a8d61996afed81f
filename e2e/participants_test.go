//go:build !e2e_only || e2e_core

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// A team's session on the real daemon: two OpenAI-compatible profiles
// and a bot, the owner and a member granted write (which turns the
// session to answer mentions only). People talk and no turn starts;
// @second gets the second profile; "@first @second" gets both, in
// order; @helper gets the bot. Each reply is its participant's, and
// usage by participant counts each one's turns and the tokens its fake
// reported.
func TestATeamAsksItsParticipantsByName(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	fakes := withFakes(t, home, "first", "second")
	startDaemon(t, home)
	c := newClient(t, home)
	ctx := ctxT(t)
	if _, err := c.CreateSession(ctx, "team", wire.SessionCreate{Title: "team", Provider: "first"}); err != nil {
		t.Fatal(err)
	}
	botToken := strings.TrimSpace(lastLine(cli(t, home, "bots", "add", "helper")))
	annToken, _ := writer(t, home, "ann", "team")
	ann, err := client.New(client.Options{Home: home, Token: annToken})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Session(ctx, "team")
	if err != nil || s.Respond != wire.RespondMentions {
		t.Fatalf("the shared session answers %q (%v), want mentions", s.Respond, err)
	}
	parts := []string{"second", "bot:helper"}
	if s, err = c.PatchSession(ctx, "team", s.ETag, wire.SessionPatch{Participants: &parts}); err != nil || len(s.Participants) != 2 {
		t.Fatalf("participants: %+v %v", s, err)
	}
	bot := dialWS(t, client.Snapshot{BaseURL: c.Snapshot().BaseURL, Token: botToken})
	bot.send(wire.Command{ID: 1, Op: wire.OpHello})
	bot.next(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == 1 })
	bot.send(wire.Command{ID: 2, Op: wire.OpServe})
	bot.next(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == 2 })

	send := func(who *client.Client, text string) wire.Receipt {
		t.Helper()
		r, err := who.PutInput(ctx, "team", uuid.NewString(), text)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := send(c, "morning, ann"); r.TurnID != "" || r.Delivery != wire.DeliveryDone {
		t.Fatalf("people talking started a turn: %+v", r)
	}
	if r := send(ann, "morning! coffee first"); r.TurnID != "" {
		t.Fatalf("people talking started a turn: %+v", r)
	}
	fakes["second"].Push(fakeopenai.Reply{Chunks: []string{"second's idea"}, Usage: &fakeopenai.Usage{PromptTokens: 30, CompletionTokens: 3}})
	send(ann, "@second any ideas?")
	waitTurnsClosed(t, ctx, c, "team", 1)
	fakes["first"].Push(fakeopenai.Reply{Chunks: []string{"first agrees"}, Usage: &fakeopenai.Usage{PromptTokens: 40, CompletionTokens: 2}})
	fakes["second"].Push(fakeopenai.Reply{Chunks: []string{"second insists"}, Usage: &fakeopenai.Usage{PromptTokens: 50, CompletionTokens: 2}})
	send(c, "@first @second compare")
	waitTurnsClosed(t, ctx, c, "team", 3)
	r := send(ann, "@helper what is deployed?")
	turn := bot.next(func(f wire.Frame) bool { return f.Op == wire.PushTurn }).Turn
	if turn.TurnID != r.TurnID {
		t.Fatalf("the bot was handed %s, want %s", turn.TurnID, r.TurnID)
	}
	bot.send(wire.Command{ID: 3, Op: wire.OpReply, TurnID: turn.TurnID, Text: "v1.2 is deployed", Done: true})
	bot.next(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == 3 })
	waitTurnsClosed(t, ctx, c, "team", 4)

	var got []string
	for _, ev := range events(t, ctx, c, "team") {
		if ev.Type == wire.EventMessage {
			got = append(got, fmt.Sprintf("%s (%s): %s", ev.Author, ev.AuthorID, ev.Text))
		}
	}
	who := func(line string) string { return line[:strings.Index(line, ":")] } // "name (author id)"
	owner, member := who(got[0]), who(got[1])
	want := []string{
		owner + ": morning, ann",
		member + ": morning! coffee first",
		member + ": @second any ideas?",
		"second (provider:second): second's idea",
		owner + ": @first @second compare",
		"first (provider:first): first agrees",
		"second (provider:second): second insists",
		member + ": @helper what is deployed?",
		"helper (bot:helper): v1.2 is deployed",
	}
	if !strings.HasPrefix(member, "ann (") || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the session's messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Second's last request tells who said what: ann, the owner, first.
	reqs := fakes["second"].Requests()
	var told []string
	for i := range reqs[len(reqs)-1].Messages {
		if m, ok := reqs[len(reqs)-1].UserMessage(i); ok {
			told = append(told, m.Name+": "+m.Text)
		}
	}
	if s := strings.Join(told, "\n"); !strings.Contains(s, "ann: morning! coffee first") || !strings.Contains(s, "first: first agrees") {
		t.Fatalf("second was told:\n%s", s)
	}
	u, err := c.Usage(ctx, "participant", "")
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]string{}
	for _, x := range u.Totals {
		by[x.Key] = fmt.Sprintf("%d turns, %d in, %d out", x.Turns, x.InputTokens, x.OutputTokens)
	}
	if by["first"] != "1 turns, 40 in, 2 out" || by["second"] != "2 turns, 80 in, 5 out" || by["bot:helper"] != "1 turns, 0 in, 0 out" {
		t.Fatalf("usage by participant: %v", by)
	}
}
