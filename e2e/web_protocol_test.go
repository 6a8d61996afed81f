//go:build !e2e_only || e2e_web

package e2e

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// The page speaks the same protocol as every other client, with nothing
// of its own. These tests watch its websocket from Chromium's side
// (recordSockets) and the daemon's.

// One websocket carries every session the page shows: the one open
// subscribed, the list's from the sessions feed, each live (their
// messages count as unread). Opening another subscribes it.
func TestWebOneSocketForEverySession(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "a", create: wire.SessionCreate{Title: "alpha"}})
	for id, title := range map[string]string{"b": "beta", "c": "gamma"} {
		if _, err := fx.c.CreateSession(fx.ctx, id, wire.SessionCreate{Title: title}); err != nil {
			t.Fatal(err)
		}
	}
	p := startBrowser(t).tab()
	ws := p.recordSockets()
	p.navigate(ownerLink(t, fx.home, "a"))
	p.waitOpen("alpha")
	p.wait("three listed", `document.querySelectorAll('#sessions li').length === 3`)
	for _, id := range []string{"a", "b", "c"} {
		if _, err := fx.c.PutInput(fx.ctx, id, uuid.Must(uuid.NewV7()).String(), "to "+id); err != nil {
			t.Fatal(err)
		}
	}
	p.wait("alpha's reply, and beta's and gamma's unread", shownCommitted("echo: to a")+` &&
		document.querySelector('#sessions li[data-session=b] .count')?.textContent === '1' &&
		document.querySelector('#sessions li[data-session=c] .count')?.textContent === '1'`)
	if n := ws.count(); n != 1 {
		t.Fatalf("the page opened %d websockets", n)
	}
	subs := func() []string {
		var subs []string
		for _, c := range ws.sentOps(wire.OpSub) {
			subs = append(subs, c.Session)
		}
		slices.Sort(subs)
		return subs
	}
	if fmt.Sprint(subs()) != "[a]" || len(ws.sentOps(wire.OpFeed)) != 1 {
		t.Fatalf("the page subscribed to %v on its socket, and asked for the feed %d times", subs(), len(ws.sentOps(wire.OpFeed)))
	}
	clickSession(p, "b")
	p.wait("beta open, read", shownCommitted("echo: to b")+` && !document.querySelector('#sessions li[data-session=b] .count')`)
	if fmt.Sprint(subs()) != "[a b]" {
		t.Fatalf("after opening b the page subscribed to %v", subs())
	}
}

// clickSession clicks a session in the page's list. In the page's own
// script: the list is drawn afresh as the feed brings news, so a node
// found by one call and clicked by the next may be gone.
func clickSession(p *page, id string) {
	p.t.Helper()
	p.wait("session "+id+" listed", fmt.Sprintf(`(() => { const b = document.querySelector('#sessions li[data-session=%q] button'); if (b) b.click(); return !!b })()`, id))
}

// After a restart the page's hello reattaches every subscription from its
// own epoch and offset (the session shown as a viewer, the others in the
// background), and the daemon resumes each: no reset, nothing twice.
func TestWebHelloAfterRestartResumesEachSub(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "a", create: wire.SessionCreate{Title: "alpha"}})
	if _, err := fx.c.CreateSession(fx.ctx, "b", wire.SessionCreate{Title: "beta"}); err != nil {
		t.Fatal(err)
	}
	cli(t, fx.home, "send", "a", "before a") // returns with the reply: the heads stay put
	cli(t, fx.home, "send", "b", "before b")
	want := map[string]wire.Session{}
	for _, id := range []string{"a", "b"} {
		s, err := fx.c.Session(fx.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want[id] = s
	}
	p := startBrowser(t).tab()
	ws := p.recordSockets()
	p.navigate(ownerLink(t, fx.home, "a"))
	p.waitOpen("alpha")
	// Open b, then a again: both stay subscribed (the few opened last).
	clickSession(p, "b")
	p.waitOpen("beta")
	clickSession(p, "a")
	p.waitOpen("alpha")
	p.wait("every event of both", fmt.Sprintf(`albedo.client.subs.get('a')?.offset === %d && albedo.client.subs.get('b')?.offset === %d`,
		want["a"].Head, want["b"].Head))

	fx.d.stop()
	p.wait("the daemon stopped", `document.querySelector('#conn').textContent.startsWith('daemon stopped')`)
	startDaemon(t, fx.home)
	p.wait("connected again", `document.querySelector('#conn').textContent === 'connected'`)
	hellos := ws.sentOps(wire.OpHello)
	if len(hellos) != 2 {
		t.Fatalf("the page sent %d hellos", len(hellos))
	}
	got := map[string]wire.Sub{}
	for _, s := range hellos[1].Subs {
		got[s.Session] = s
	}
	for id, s := range want {
		sub, ok := got[id]
		watching := sub.Watch == nil || *sub.Watch
		if !ok || sub.Epoch != s.Epoch || sub.After == nil || *sub.After != s.Head || watching != (id == "a") {
			t.Fatalf("the hello after the restart has %s as %+v (after %v); want epoch %s, after %d, watching %v",
				id, sub, sub.After, s.Epoch, s.Head, id == "a")
		}
	}

	// Both sessions go on; the page sees them on the new socket, and no
	// reset came on it.
	cli(t, fx.home, "send", "a", "after a")
	cli(t, fx.home, "send", "b", "after b")
	p.wait("the news of both", shownCommitted("echo: after a")+` && albedo.views.get('b').events.some(e => e.text === 'echo: after b')`)
	frames := ws.received(wire.OpHello, 2)
	if len(frames) == 0 || !frames[0].IsReply() || len(frames[0].Reply.Subs) != 2 {
		t.Fatalf("the hello's reply: %+v", frames)
	}
	for _, sr := range frames[0].Reply.Subs {
		if !sr.OK || !sr.Recovered {
			t.Fatalf("the daemon did not resume %s: %+v", sr.Session, sr)
		}
	}
	for _, f := range frames {
		if f.Op == wire.PushReset {
			t.Fatalf("a reset came after the restart: %+v", f.Reset)
		}
	}
	for _, id := range []string{"a", "b"} {
		if !eval[bool](p, viewIsWhole(id)) {
			t.Fatalf("the page's view of %s has a gap or a duplicate", id)
		}
	}
	wantMessages(t, fx, "a", p.messages())
}

// Inputs typed while the daemon is down wait, say so, and are sent when
// the page is back: in the order typed, each committed once and
// answered once.
func TestWebInputsWhileDownArriveInOrderOnce(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "offline"}})
	b := startBrowser(t)
	p := b.open(ownerLink(t, fx.home, "s"))
	p.waitOpen("offline")
	fx.d.stop()
	p.wait("the daemon stopped", `document.querySelector('#conn').textContent.startsWith('daemon stopped')`)
	typed := []string{"first while down", "second while down", "third while down"}
	for i, text := range typed {
		eval[bool](p, fmt.Sprintf(`(() => { const i = document.querySelector('#input'); i.focus(); i.value = %q; return true })()`, text))
		p.do(pressEnter("#input"))
		p.wait("the inputs waiting, in the transcript", fmt.Sprintf(`document.querySelector('#pending').textContent === '%d sending…' && document.querySelectorAll('#transcript .outbox article.pending').length === %d && document.querySelector('#transcript .outbox').lastElementChild.innerText.includes(%q)`, i+1, i+1, text))
	}
	startDaemon(t, fx.home)
	p.wait("their replies", shownCommitted("echo: third while down")+` && document.querySelector('#pending').textContent === '' && !document.querySelector('#transcript .outbox')`)
	if got := waitInputs(t, fx.c, "s", 3); fmt.Sprint(got) != fmt.Sprint(typed) {
		t.Fatalf("the daemon stored %q, typed %q", got, typed)
	}
	wantMessages(t, fx, "s", p.messages())
}

// A page opened while a reply streams shows the text so far at once (the
// daemon's partial to a late subscriber), then the rest, then the
// committed message.
func TestWebLateJoinerSeesThePartialReply(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Title: "midturn", Provider: "fake"}})
	block := make(chan struct{})
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"the text ", "so far"}, Block: block})
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "go"); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t)
	first := b.open(ownerLink(t, fx.home, "s"))
	first.wait("the reply streaming", `(document.querySelector('#stream')?.innerText || '').includes('the text so far')`)

	late := b.tab()
	ws := late.recordSockets()
	late.navigate(shareLink(t, fx.home, "s"))
	late.wait("the partial reply", `(document.querySelector('#stream')?.innerText || '').includes('the text so far')`)
	var partial string
	for _, f := range ws.received(wire.OpHello, 1) {
		if f.Op == wire.PushPartial {
			partial = f.Text.Text
		}
	}
	if partial != "the text so far" {
		t.Fatalf("the late page's partial was %q", partial)
	}
	close(block)
	for _, p := range []*page{first, late} {
		p.wait("the committed reply", `!document.querySelector('#stream') && `+shownCommitted("the text so far"))
		wantMessages(t, fx, "s", p.messages())
	}
}

// A hello the daemon refuses leaves its socket open (only a bad token
// closes it), so the client closes it before trying again on a new one:
// protocol.js run in the page against a WebSocket stand-in whose hello is
// always refused.
func TestWebProtocolClosesTheSocketOfARefusedHello(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{})
	info, err := client.ReadDaemonFile(fx.home)
	if err != nil {
		t.Fatal(err)
	}
	p := startBrowser(t).open(fmt.Sprintf("http://127.0.0.1:%d/", info.Port))
	eval[bool](p, `(() => {
		window.result = null;
		const sockets = [];
		class Refusing {
			static OPEN = 1;
			constructor() { this.readyState = 0; this.closed = false; sockets.push(this);
				setTimeout(() => { this.readyState = 1; this.onopen(); }) }
			send(data) { const c = JSON.parse(data);
				setTimeout(() => this.onmessage({data: JSON.stringify({id: c.id, ok: false, error: {code: 'internal', message: 'refused', retryable: true}})})) }
			close() { this.closed = true; this.readyState = 3; setTimeout(() => this.onclose({code: 1000, reason: ''})) }
		}
		import('/assets/protocol.js').then(({Client}) => {
			const real = window.WebSocket;
			window.WebSocket = Refusing;
			const c = new Client({url: 'ws://127.0.0.1:1/v1/ws', token: 'x'});
			const check = () => {
				if (sockets.length < 2) return setTimeout(check, 10);
				c.close();
				window.WebSocket = real;
				window.result = {first: sockets[0].closed, opened: sockets.length};
			};
			check();
		});
		return true })()`)
	p.wait("a second attempt", `window.result !== null`)
	if !eval[bool](p, `result.first`) {
		t.Fatalf("the socket of the refused hello was left open (%d opened)", eval[int](p, `result.opened`))
	}
}
