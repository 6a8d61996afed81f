//go:build !e2e_only || e2e_term

package e2e

import (
	"strings"
	"testing"
	"time"

	"albedo/client"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// Participants in a real terminal. A session on "first" is given
// "second" as a participant and set to answer only mentions, with
// /participants and /respond: the status bar says so. "hi all" starts
// no turn; "@sec" completes with Tab to "@second ", and the message
// sent with it gets second's reply, named so. /respond always switches
// the mode back, and a message that mentions no one gets first's reply.
func TestTermParticipants(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	first, second := twoFakes(t, home)
	first.Push(fakeopenai.Reply{Chunks: []string{"first ", "speaking"}})
	second.Push(fakeopenai.Reply{Chunks: []string{"second ", "speaking"}})
	startDaemon(t, home)
	c := newClient(t, home)
	ctx := ctxT(t)
	s, err := c.CreateSession(ctx, "party", wire.SessionCreate{Title: "party", Provider: "first"})
	if err != nil {
		t.Fatal(err)
	}

	x := startTmux(t, home, 110, 30)
	x.waitPane("the session, connected", func(p string) bool {
		return strings.Contains(p, " connected") && strings.Contains(p, "message · /help")
	})
	x.keys("-l", "/participants second")
	x.keys("Enter")
	x.waitPane("the participant in the status bar", has("answers all · @first @second"))
	x.keys("-l", "/respond mentions")
	x.keys("Enter")
	x.waitPane("the mode and the settings events", func(p string) bool {
		return strings.Contains(p, "mentions only · @first @second") && strings.Contains(p, "· participants second (by ") &&
			strings.Contains(p, "· mentions only (by ")
	})

	x.keys("-l", "hi all")
	x.keys("Enter")
	x.waitPane("the quiet message in the transcript", has("│ hi all")) // the composer's is "│❯ hi all"

	x.keys("-l", "@sec")
	x.waitPane("the name @sec may become", has("@second          participant"))
	x.keys("Tab")
	x.waitPane("the mention completed", has("❯ @second"))
	x.keys("-l", "what say you?") // after the space the completion put
	x.waitPane("the message with its mention", has("❯ @second what say you?"))
	x.keys("Enter")
	pane := x.waitPane("second's reply, named", func(p string) bool {
		return strings.Contains(p, "assistant · second") && strings.Contains(p, "second speaking")
	})
	if n := len(first.Requests()); n != 0 {
		t.Fatalf("first was asked %d times: answering only mentions, neither message was its\n%s", n, pane)
	}
	if n := len(second.Requests()); n != 1 {
		t.Fatalf("second was asked %d times, want once\n%s", n, pane)
	}
	turns, replies := participantTurns(t, c, s.ID)
	if len(turns) != 1 || turns[0] != "second" || len(replies) != 1 || replies[0] != "second provider:second" {
		t.Fatalf("the log's turns %q and replies %q: want one, second's (\"hi all\" starts none)", turns, replies)
	}

	x.keys("-l", "/respond always")
	x.keys("Enter")
	x.waitPane("the mode back to answering all", has("answers all · @first @second"))
	x.keys("-l", "and now?")
	x.keys("Enter")
	x.waitPane("first's reply, named", func(p string) bool {
		return strings.Contains(p, "assistant · first") && strings.Contains(p, "first speaking")
	})
	if n := len(first.Requests()); n != 1 {
		t.Fatalf("first was asked %d times, want once", n)
	}
	x.keys("C-q")
}

// participantTurns reads session's log: who each turn started for, and each
// reply's author and author id. It reads again while a turn has started
// and not ended: a pane shows a reply as it streams, before its commit.
func participantTurns(t *testing.T, c *client.Client, session string) (turns, replies []string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := c.History(ctxT(t), session, 0, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		turns, replies = nil, nil
		open := 0
		for _, ev := range p.Events {
			switch {
			case ev.Type == wire.EventTurn && ev.State == wire.TurnStarted:
				turns, open = append(turns, ev.Author), open+1
			case ev.Type == wire.EventTurn:
				open--
			case ev.Type == wire.EventMessage && ev.Role == wire.RoleAssistant:
				replies = append(replies, ev.Author+" "+ev.AuthorID)
			}
		}
		if open == 0 || time.Now().After(deadline) {
			return turns, replies
		}
		time.Sleep(20 * time.Millisecond) // polls the log: the commit has no event this reader follows
	}
}
