package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"albedo/api/wire"
	"albedo/hub/provider/fakeopenai"
)

// domMessages is the page's committed messages, as the DOM holds them:
// offset, role and the text a reader sees.
const domMessages = `[...document.querySelectorAll('#transcript article[data-offset]')].map(a => ({
	offset: Number(a.dataset.offset), role: a.dataset.role, text: a.querySelector('.body').innerText.trim()}))`

type domMessage struct {
	Offset int64  `json:"offset"`
	Role   string `json:"role"`
	Text   string `json:"text"`
}

// wantMessages compares the DOM's messages with the daemon's history: the
// same offsets, roles and texts (Markdown drawn: the texts here are plain).
func wantMessages(t *testing.T, fx *fixture, id string, got []domMessage) {
	t.Helper()
	var want []domMessage
	for _, ev := range allEvents(t, fx, id) {
		if ev.Type == wire.EventMessage {
			want = append(want, domMessage{ev.Offset, string(ev.Role), strings.TrimSpace(ev.Text)})
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the page shows\n%v\nthe daemon has\n%v", got, want)
	}
}

func allEvents(t *testing.T, fx *fixture, id string) []wire.Event {
	t.Helper()
	var out []wire.Event
	for after := int64(0); ; {
		p, err := fx.c.History(fx.ctx, id, after, 0, 500)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Events...)
		if !p.More || len(p.Events) == 0 {
			return out
		}
		after = p.Events[len(p.Events)-1].Offset
	}
}

func (p *page) messages() []domMessage {
	p.t.Helper()
	s := eval[string](p, `JSON.stringify(`+domMessages+`)`)
	var out []domMessage
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		p.t.Fatalf("messages: %v (%s)", err, s)
	}
	return out
}

// Test 1: an owner page (albedo open's link) sends a message with Enter;
// the reply streams in, is replaced by the committed one, and the DOM's
// messages equal GET /v1/sessions/{id}/events.
func TestWebOwnerSendsAndStreams(t *testing.T) {
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Title: "web", Provider: "fake"}})
	block := make(chan struct{})
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"Hello ", "from the ", "stream"}, Block: block})
	b := startBrowser(t)
	p := b.open(ownerLink(t, fx.home, "s"))
	p.wait("a connected owner page", `document.querySelector('#conn').textContent === 'connected' && !!document.querySelector('#input')`)
	if loc := p.text(); strings.Contains(loc, "token=") {
		t.Fatal("the token is on the page")
	}
	if href := eval[string](p, `location.href`); strings.Contains(href, "token") {
		t.Fatalf("the token stayed in the address bar: %s", href)
	}
	eval[bool](p, `(() => { const i = document.querySelector('#input'); i.focus(); i.value = 'hi there'; return true })()`)
	p.do(pressEnter("#input"))
	p.wait("the streaming reply", `(document.querySelector('#stream')?.innerText || '').includes('Hello from the stream')`)
	p.screenshot("web-owner-streaming")
	close(block)
	p.wait("the committed reply", `!document.querySelector('#stream') && [...document.querySelectorAll('article[data-role=assistant]')].some(a => a.innerText.includes('Hello from the stream'))`)
	wantMessages(t, fx, "s", p.messages())
	p.screenshot("web-owner")
}
