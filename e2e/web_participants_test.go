//go:build !e2e_only || e2e_web

package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// enterKey presses Enter as a keyboard does: one keyDown that carries
// its text, which the page's keydown may take (preventDefault) so that
// nothing is typed. chromedp.KeyEvent sends the text in a char event of
// its own, which types a line break whatever the keydown did.
func enterKey() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		key := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Key: "Enter", Code: "Enter",
			WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13, Text: "\r", UnmodifiedText: "\r"}
		if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, key); err != nil {
			return err
		}
		key.Type, key.Text, key.UnmodifiedText = input.DispatchKeyEventTypeKeyUp, "", ""
		_, err := cdp.Call(ctx, t, input.DispatchKeyEvent, key)
		return err
	})
}

// mentionList is a JavaScript expression: the names the composer's @
// completion lists, the chosen one marked with a *, or "closed".
const mentionList = `(() => { const l = document.querySelector('#mentions');
	return l.hidden ? 'closed' : [...l.querySelectorAll('li[role=option]')].map(li => li.textContent + (li.getAttribute('aria-selected') === 'true' ? '*' : '')).join(',') })()`

// A session whose provider is "first", with "second" as a participant,
// answering mentions only, on a phone's screen (360 px). A message that
// mentions no one is sent and starts no turn. Typing "@" in the composer
// lists the names it may mention, over the composer and within the
// screen: ArrowDown and Enter pick one (Enter sends nothing then), Esc
// closes the list, a click picks one, "@sec" and Tab complete to
// "@second ". Sent, the message gets a reply from the second profile,
// authored "second", as it streams and once committed. The meta line
// says the session answers mentions only (the box's placeholder says
// how to ask); switched to every message there (with a stale ETag,
// which the page renews), a message that mentions no one gets the first
// profile's reply.
func TestWebParticipants(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	fakes := withFakes(t, home, "first", "second")
	block := make(chan struct{}) // second's reply streams, and waits
	fakes["second"].Push(fakeopenai.Reply{Chunks: []string{"from the ", "second fake"}, Block: block})
	fakes["first"].Push(fakeopenai.Reply{Chunks: []string{"from the ", "first fake"}})
	d := startDaemon(t, home)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the daemon's log:\n%s", d.logText())
		}
	})
	c := newClient(t, home)
	ctx := ctxT(t)
	s, err := c.CreateSession(ctx, "s", wire.SessionCreate{Title: "team", Provider: "first"})
	if err != nil {
		t.Fatal(err)
	}
	mentions := wire.RespondMentions
	if _, err := c.PatchSession(ctx, "s", s.ETag, wire.SessionPatch{Participants: &[]string{"second"}, Respond: &mentions}); err != nil {
		t.Fatalf("patch participants: %v", err)
	}

	p := startBrowser(t).tab()
	p.do(chromedp.EmulateViewport(360, 740))
	p.navigate(ownerLink(t, home, "s"))
	p.waitOpen("team")
	p.wait("the mode: mentions only, with @second", `(() => { const a = document.querySelector('#answers');
		return !a.hidden && document.querySelector('#who').textContent === 'with @second' &&
			document.querySelector('#respond').value === 'mentions' && a.innerText.includes('answers') && a.innerText.includes('mentions only') &&
			document.querySelector('#input').placeholder.includes('@name asks for a reply') })()`)
	p.wait("the meta line within the screen", fitsPhone+` && document.querySelector('#meta').scrollWidth <= document.querySelector('#meta').clientWidth`)

	// No mention: a message, and no turn.
	p.do(chromedp.SendKeys(chromedp.CSS("#input"), "hi all"), enterKey())
	p.wait("hi all, sent", shownCommitted("hi all"))
	for _, ev := range events(t, ctx, c, "s") {
		if ev.Type == wire.EventTurn || ev.Type == wire.EventMessage && ev.Role == wire.RoleAssistant {
			t.Fatalf("a message that mentions no one started a turn: %+v", ev)
		}
	}

	// The completion: "@" lists both names, the provider's first.
	p.do(chromedp.SendKeys(chromedp.CSS("#input"), "@"))
	p.wait("both names listed, over the composer, within the screen", mentionList+` === '@first*,@second' && (() => {
		const r = document.querySelector('#mentions').getBoundingClientRect();
		return r.left >= 0 && r.right <= innerWidth && r.bottom <= document.querySelector('#input').getBoundingClientRect().top &&
			document.querySelector('#input').getAttribute('aria-activedescendant') === document.querySelector('#mentions li[aria-selected=true]').id })()`)
	p.screenshot("web-mentions")
	p.do(chromedp.KeyEvent(kb.ArrowDown))
	p.wait("second chosen", mentionList+` === '@first,@second*'`)
	p.do(enterKey())
	p.wait("Enter: @second in the box, nothing sent", `document.querySelector('#input').value === '@second ' && `+mentionList+` === 'closed' && albedo.client.pending.size === 0`)
	clear := `(() => { const i = document.querySelector('#input'); i.value = ''; i.focus(); return true })()`
	eval[bool](p, clear)
	p.do(chromedp.SendKeys(chromedp.CSS("#input"), "@"))
	p.wait("listed again", mentionList+` === '@first*,@second'`)
	p.do(chromedp.KeyEvent(kb.Escape))
	p.wait("Esc: closed, the @ left", mentionList+` === 'closed' && document.querySelector('#input').value === '@'`)
	eval[bool](p, clear)
	p.do(chromedp.SendKeys(chromedp.CSS("#input"), "hey @f"))
	p.wait("first, alone", mentionList+` === '@first*'`)
	p.do(chromedp.Click(chromedp.CSS(`#mentions li[data-name="first"]`)))
	p.wait("the click: @first in the box", `document.querySelector('#input').value === 'hey @first ' && `+mentionList+` === 'closed' && document.activeElement.id === 'input'`)
	eval[bool](p, clear)
	p.do(chromedp.SendKeys(chromedp.CSS("#input"), "@sec"))
	p.wait("second, alone", mentionList+` === '@second*'`)
	p.do(chromedp.KeyEvent(kb.Tab))
	p.wait("Tab: @second in the box", `document.querySelector('#input').value === '@second ' && `+mentionList+` === 'closed' && document.activeElement.id === 'input'`)

	// Sent, the second profile answers, by name, as it streams too.
	p.do(chromedp.SendKeys(chromedp.CSS("#input"), "what do you think?"), enterKey())
	p.wait("second's reply, streaming", `(() => { const s = document.querySelector('#transcript article.streaming');
		return !!s && s.querySelector('header').textContent === 'assistant · second' && s.innerText.includes('from the second fake') })()`)
	close(block)
	p.wait("second's reply", `[...document.querySelectorAll('#transcript article[data-role=assistant]')].some(a =>
		a.querySelector('header').textContent.startsWith('assistant · second') && a.innerText.includes('from the second fake'))`)
	evs := waitTurnsClosed(t, ctx, c, "s", 1)
	checkTurn(t, evs, "@second what do you think?", "second", "from the second fake")
	checkQuiet(t, evs, "hi all")

	// The mode, switched on the page, with an ETag gone stale (as if
	// someone changed the session just before): the page reads it again
	// and retries. A message with no mention then gets the provider's
	// reply.
	eval[bool](p, `(() => { albedo.views.get('s').status.etag = '"1"';
		const r = document.querySelector('#respond'); r.value = 'always'; r.dispatchEvent(new Event('change', {bubbles: true})); return true })()`)
	p.wait("the mode: every message", `albedo.views.get('s').session.respond === 'always' && document.querySelector('#respond').value === 'always' &&
		!document.querySelector('#notice').classList.contains('error') &&
		[...document.querySelectorAll('#transcript .settings')].some(d => d.textContent.includes('answers every message'))`)
	if got, err := c.Session(ctx, "s"); err != nil || got.Respond != wire.RespondAlways || strings.Join(got.Participants, ",") != "second" {
		t.Fatalf("after the switch, the session is %+v (%v)", got, err)
	}
	p.do(chromedp.SendKeys(chromedp.CSS("#input"), "anyone there?"), enterKey())
	p.wait("first's reply", `[...document.querySelectorAll('#transcript article[data-role=assistant]')].some(a =>
		a.querySelector('header').textContent.startsWith('assistant · first') && a.innerText.includes('from the first fake'))`)
	evs = waitTurnsClosed(t, ctx, c, "s", 2)
	checkTurn(t, evs, "anyone there?", "first", "from the first fake")
	if n, m := len(fakes["first"].Requests()), len(fakes["second"].Requests()); n != 1 || m != 1 {
		t.Fatalf("the first profile was asked %d times, the second %d; want once each", n, m)
	}
	p.wait("the page within the screen", fitsPhone)
	if ex := p.exceptions(); len(ex) > 0 {
		t.Fatalf("the page threw: %v", ex)
	}
}

// checkTurn finds the person's message text among evs and checks that
// one turn answered it: started naming who, and its reply authored by
// who, with who's author id, saying reply.
func checkTurn(t *testing.T, evs []wire.Event, text, who, reply string) {
	t.Helper()
	input := ""
	for _, ev := range evs {
		if ev.Type == wire.EventMessage && ev.Role == wire.RoleUser && ev.Text == text {
			input = ev.InputID
		}
	}
	if input == "" {
		t.Fatalf("no message %q in %+v", text, evs)
	}
	started, replied := 0, 0
	for _, ev := range evs {
		if ev.InputID != input {
			continue
		}
		switch {
		case ev.Type == wire.EventTurn && ev.State == wire.TurnStarted:
			started++
			if ev.Author != who {
				t.Fatalf("the turn of %q started naming %q, not %q", text, ev.Author, who)
			}
		case ev.Type == wire.EventMessage && ev.Role == wire.RoleAssistant:
			replied++
			if ev.Author != who || ev.AuthorID != wire.ParticipantID(who) || ev.Text != reply {
				t.Fatalf("the reply to %q: %+v; want %q by %s (%s)", text, ev, reply, who, wire.ParticipantID(who))
			}
		}
	}
	if started != 1 || replied != 1 {
		t.Fatalf("%q: %d turns started, %d replies; want one each", text, started, replied)
	}
}

// checkQuiet checks that the person's message text started no turn: no
// event but the message itself carries its input id, and the message
// after it is not a reply.
func checkQuiet(t *testing.T, evs []wire.Event, text string) {
	t.Helper()
	for i, ev := range evs {
		if ev.Type != wire.EventMessage || ev.Role != wire.RoleUser || ev.Text != text {
			continue
		}
		for _, e := range evs[i+1:] {
			if ev.InputID != "" && e.InputID == ev.InputID {
				t.Fatalf("%q started a turn: %+v", text, e)
			}
			if e.Type == wire.EventMessage {
				if e.Role == wire.RoleAssistant {
					t.Fatalf("%q was answered: %+v", text, e)
				}
				break
			}
		}
		return
	}
	t.Fatalf("no message %q in %+v", text, evs)
}
