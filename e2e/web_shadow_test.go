//go:build !e2e_only || e2e_web

package e2e

import (
	"testing"

	"github.com/google/uuid"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// A reply whose HTML names the page's own elements (input, composer,
// notice, pending, announce, stream) does not disarm the page: the
// composer still sends, and notices and announcements still reach their
// places, not the message's.
func TestWebMessageIdsCannotShadowThePage(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Title: "shadow", Provider: "fake"}})
	var evil string
	for _, id := range []string{"input", "composer", "notice", "pending", "announce", "stream", "send", "older", "transcript"} {
		evil += `<a id="` + id + `" name="` + id + `">` + id + `</a> `
	}
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{evil}})
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "bait"); err != nil {
		t.Fatal(err)
	}
	p := startBrowser(t).open(ownerLink(t, fx.home, "s"))
	p.wait("the reply drawn", `document.querySelectorAll('#transcript article[data-role=assistant] a').length === 9`)
	if n := eval[int](p, `document.querySelectorAll('#transcript article [id="input"], #transcript article [id="notice"], #transcript article [name="input"]').length`); n != 0 {
		t.Fatalf("%d elements of the message kept a page's id or name", n)
	}
	// The composer sends, and the reply is announced in the page's region.
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"still here"}})
	eval[bool](p, `(() => { const i = document.querySelector('textarea#input'); i.focus(); i.value = 'after the bait'; return true })()`)
	p.do(pressEnter("textarea#input"))
	p.wait("the reply to a message sent after it", shownCommitted("still here")+` && document.querySelector('div#announce').textContent.includes('still here')`)
	if got := waitInputs(t, fx.c, "s", 2); len(got) != 2 || got[1] != "after the bait" {
		t.Fatalf("inputs %q", got)
	}
}
