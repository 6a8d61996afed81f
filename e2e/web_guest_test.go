//go:build !e2e_only || e2e_web

package e2e

import (
	"testing"

	"github.com/google/uuid"

	"albedo/wire"
)

// The page marks a guest's messages: a guest picks their own name, and
// one named as someone of the home would otherwise pass for them.
func TestWebMarksGuests(t *testing.T) {
	parallel(t)
	fx, p := alphaBetaPage(t)
	link, err := fx.c.ShareLink(fx.ctx, "a", wire.LinkCreate{Access: wire.AccessWrite, Label: "guests"})
	if err != nil {
		t.Fatal(err)
	}
	snap := fx.c.Snapshot()
	snap.Token = link.Token
	g := dialWS(t, snap)
	g.send(wire.Command{ID: 1, Op: wire.OpHello, Name: "zed"})
	if f := g.next(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == 1 }); !f.Reply.OK {
		t.Fatalf("the guest's hello: %+v", f.Reply.Error)
	}
	g.send(wire.Command{ID: 2, Op: wire.OpSend, Session: "a", InputID: uuid.Must(uuid.NewV7()).String(), Text: "hi from a guest"})
	p.wait("the guest's message, marked", `[...document.querySelectorAll('article[data-role=user] header')].some(h => h.textContent.startsWith('user · zed (guest)'))`)
}
