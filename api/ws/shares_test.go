package ws

import (
	"context"
	"testing"

	"albedo/api/ws/wstest"
	"albedo/wire"
)

// helloRefused says hello on w and expects it refused with too_many and
// a close with 1013.
func helloRefused(t *testing.T, w *wstest.Client, who string) {
	t.Helper()
	w.Send(wire.Command{ID: 1, Op: wire.OpHello, Client: "test/1", Token: w.Token})
	if r := w.Reply(1); r.OK || r.Error.Code != wire.CodeTooMany {
		t.Fatalf("%s: hello answered %+v, want too_many", who, r)
	}
	if code := w.Closed(); code != StatusTryAgainLater {
		t.Fatalf("%s: closed with %d, want %d", who, code, StatusTryAgainLater)
	}
}

// One token holds at most its share of websockets, and links, guests and
// bots together at most what is not kept for people: one read link
// cannot take the connections an owner needs. Owners have no share; a
// member's token has one, and may use the room kept for people; a share
// is given back when a websocket closes.
func TestWebsocketsAreSharedAmongTokens(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{MaxPerToken: 3, MaxOthers: 5})
	e.create("s")
	ctx := context.Background()
	link := func(label string, a wire.Access) string {
		tok, _, err := e.hub.Share(ctx, "s", wire.LinkCreate{Label: label, Access: a})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	read, write := link("read", wire.AccessRead), link("write", wire.AccessWrite)

	var held []*wstest.Client
	for range 3 {
		w := e.dialToken(read)
		w.Hello()
		held = append(held, w)
	}
	helloRefused(t, e.dialToken(read), "a read link's fourth websocket")

	// A share comes back when one closes.
	held[0].Conn.Close(1000, "")
	held[0].Closed()
	w := e.dialToken(read)
	w.Hello()
	held = append(held[1:], w)

	// Guests of a write link: two fit in what links may hold (5), the
	// third does not, though the link is within its share.
	for range 2 {
		g := e.dialToken(write)
		g.Hello()
		held = append(held, g)
	}
	helloRefused(t, e.dialToken(write), "a guest past what links may hold")
	helloRefused(t, e.dialToken(e.botToken("helper")), "a bot past what links may hold")

	// People use the room kept for them: an owner with no share, a
	// member within their token's.
	for range 6 {
		e.dial(true).Hello()
	}
	tok, _, err := e.hub.AddMember(ctx, "ann", false)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		e.dialToken(tok).Hello()
	}
	helloRefused(t, e.dialToken(tok), "a member's token past its share")
}
