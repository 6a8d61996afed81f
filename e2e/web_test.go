//go:build !e2e_only || e2e_web

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
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
	for _, ev := range events(t, fx.ctx, fx.c, id) {
		if ev.Type == wire.EventMessage {
			want = append(want, domMessage{ev.Offset, string(ev.Role), strings.TrimSpace(ev.Text)})
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the page shows\n%v\nthe daemon has\n%v", got, want)
	}
}

// shownCommitted is a condition: a committed message (not the reply
// streaming) holds text.
func shownCommitted(text string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('#transcript article[data-offset]')].some(a => a.innerText.includes(%q))`, text)
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

// An owner page (albedo open's link) sends a message with Enter;
// the reply streams in, is replaced by the committed one, and the DOM's
// messages equal GET /v1/sessions/{id}/events.
func TestWebOwnerSendsAndStreams(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Title: "web", Provider: "fake"}})
	block := make(chan struct{})
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"Hello ", "from the ", "stream"}, Block: block})
	b := startBrowser(t)
	p := b.open(ownerLink(t, fx.home, "s"))
	p.waitOpen("web")
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

// shareLink is albedo share's link to session.
func shareLink(t *testing.T, home, session string) string {
	t.Helper()
	return strings.TrimSpace(lastLine(cli(t, home, "share", session)))
}

// An owner page and a viewer page (albedo share's link) show the
// same transcript while a turn streams and after; the viewer has a badge
// and no composer, and a send forced through its socket is refused.
func TestWebOwnerAndViewerAgree(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Title: "shared", Provider: "fake"}})
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "first"); err != nil {
		t.Fatal(err)
	}
	block := make(chan struct{})
	b := startBrowser(t)
	owner := b.open(ownerLink(t, fx.home, "s"))
	viewer := b.open(shareLink(t, fx.home, "s"))
	for _, p := range []*page{owner, viewer} {
		p.wait("the first reply", `document.querySelector('#conn').textContent === 'connected' && `+shownCommitted("fake: first"))
	}
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"streamed ", "to both"}, Block: block})
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "second"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*page{owner, viewer} {
		p.wait("the streaming reply", `(document.querySelector('#stream')?.innerText || '').includes('streamed to both')`)
	}
	if o, v := owner.messages(), viewer.messages(); fmt.Sprint(o) != fmt.Sprint(v) {
		t.Fatalf("while streaming, the owner sees\n%v\nthe viewer\n%v", o, v)
	}
	viewer.wait("the viewer's view", `!document.querySelector('#badge').hidden && !document.querySelector('#input') && !document.querySelector('#composer')`)
	viewer.wait("presence of both", `document.querySelector('#presence').dataset.viewers === '2'`)
	viewer.screenshot("web-viewer")
	close(block)
	for _, p := range []*page{owner, viewer} {
		p.wait("the committed reply", `!document.querySelector('#stream') && `+shownCommitted("streamed to both"))
		wantMessages(t, fx, "s", p.messages())
	}
	// A send forced through the viewer's socket is refused by the daemon.
	viewer.wait("a refused send", `(() => {
		if (window.forced === undefined) {
			window.forced = null;
			albedo.client.command({op: 'send', session: 's', input_id: '0190a8a0-0000-7000-8000-000000000001', text: 'sneaky'}, r => { window.forced = r; });
		}
		return window.forced && window.forced.ok === false && window.forced.error.code === 'forbidden';
	})()`)
	if got := waitInputs(t, fx.c, "s", 2); len(got) != 2 {
		t.Fatalf("inputs %q", got)
	}
}

// A message holding markup that would run script, and a
// javascript: link, render inert: nothing runs, and the link goes nowhere.
func TestWebMarkupIsInert(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Title: "xss", Provider: "fake"}})
	evil := "<img src=x onerror=\"window.pwned=1\"> [click](javascript:window.pwned=2) <script>window.pwned=3</script>" +
		"<a href=\"javascript:window.pwned=4\">a</a> <svg onload=\"window.pwned=5\"></svg> <iframe src=\"javascript:parent.pwned=6\"></iframe>"
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{evil}})
	// The user's text carries it too: shown as text, never as markup.
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), evil); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t)
	p := b.open(ownerLink(t, fx.home, "s"))
	p.wait("the reply", `document.querySelectorAll('#transcript article[data-role=assistant]').length === 1`)
	// Click every link the reply has, then give anything queued a frame.
	// Not those to the daemon's own pages (the <img>'s, now a link to x):
	// they run nothing, and the tab they open would hide this one, whose
	// frames would stop.
	p.wait("clicked links", `(() => { for (const a of document.querySelectorAll('#transcript a')) if (!a.href.startsWith(location.origin + '/')) a.click(); return true })()`)
	p.wait("a frame later", `new Promise(r => requestAnimationFrame(() => setTimeout(() => r(true), 50)))`)
	if got := eval[any](p, `window.pwned ?? null`); got != nil {
		t.Fatalf("a script ran: window.pwned = %v", got)
	}
	bad := eval[int](p, `document.querySelectorAll('#transcript script, #transcript iframe, #transcript img, #transcript [onerror], #transcript [onload], #transcript a[href^="javascript"]').length`)
	if bad != 0 {
		t.Fatalf("%d dangerous elements or attributes in the transcript", bad)
	}
	if user := eval[string](p, `document.querySelector('#transcript article[data-role=user] .body').textContent`); user != evil {
		t.Fatalf("the user's text is shown as %q", user)
	}
}

// An image in a reply, Markdown or raw HTML (inside a <picture> too),
// becomes a link to it: the page draws no image, so a message cannot make
// it show one, or fetch one; a link to what no link may point to (data:)
// keeps its text and goes nowhere.
func TestWebImagesBecomeLinks(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Title: "images", Provider: "fake"}})
	reply := "![md](https://img.example/md.png) <img src=\"https://img.example/raw.png\" alt=\"raw\"> " +
		"<img src=\"data:image/gif;base64,R0lGODlhAQABAAAAACw=\" alt=\"inline\"> " +
		"<picture><source srcset=\"https://img.example/p.webp\"><img src=\"https://img.example/p.png\" alt=\"pic\"></picture> " +
		"<video poster=\"https://img.example/v.png\" src=\"https://img.example/v.mp4\">vid</video>"
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{reply}})
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "show me"); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t)
	p := b.open(ownerLink(t, fx.home, "s"))
	p.wait("the reply", `document.querySelectorAll('#transcript article[data-role=assistant][data-offset]').length === 1`)
	if n := eval[int](p, `document.querySelectorAll('#transcript img, #transcript picture, #transcript source, #transcript video, #transcript audio').length`); n != 0 {
		t.Fatalf("%d images or media in the transcript: %s", n, eval[string](p, `document.querySelector('#transcript article[data-role=assistant] .body').innerHTML`))
	}
	links := eval[string](p, `JSON.stringify([...document.querySelectorAll('#transcript article[data-role=assistant] .body a')].map(a => [a.textContent, a.getAttribute('href'), a.rel]))`)
	want := `[["[image: md]","https://img.example/md.png","noopener noreferrer"],` +
		`["[image: raw]","https://img.example/raw.png","noopener noreferrer"],` +
		`["[image: inline]",null,"noopener noreferrer"],` +
		`["[image: pic]","https://img.example/p.png","noopener noreferrer"]]`
	if links != want {
		t.Fatalf("the reply's links\n%s\nwant\n%s", links, want)
	}
}

// Revoking a share closes the viewer page's socket, and the page
// says the link was revoked instead of trying again.
func TestWebRevokedShareSaysSo(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "revoked"}})
	b := startBrowser(t)
	viewer := b.open(shareLink(t, fx.home, "s"))
	viewer.wait("a connected viewer", `document.querySelector('#conn').textContent === 'connected'`)
	cli(t, fx.home, "share", "--revoke", "s")
	viewer.wait("the revocation", `!document.querySelector('#banner').hidden && document.querySelector('#banner').textContent.includes('This link was revoked')`)
	if st := eval[string](viewer, `albedo.client.state.phase`); st != "revoked" {
		t.Fatalf("the client's state is %q", st)
	}
	viewer.screenshot("web-revoked")
}

// The daemon is stopped gracefully, then SIGKILLed mid-reply: both
// pages say they are reconnecting, come back by themselves, and hold every
// message exactly once, as the daemon has them.
func TestWebPagesSurviveRestarts(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Title: "restarts", Provider: "fake"}})
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "before"); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t)
	pages := []*page{b.open(ownerLink(t, fx.home, "s")), b.open(shareLink(t, fx.home, "s"))}
	waitAll := func(what, js string) {
		t.Helper()
		for _, p := range pages {
			p.wait(what, js)
		}
	}
	waitAll("the first reply", `document.querySelector('#conn').textContent === 'connected' && `+shownCommitted("fake: before"))

	fx.d.stop()
	waitAll("stopped, said so", `document.querySelector('#conn').textContent.startsWith('daemon stopped')`)
	d := startDaemon(t, fx.home)
	waitAll("connected again", `document.querySelector('#conn').textContent === 'connected'`)
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "after the stop"); err != nil {
		t.Fatal(err)
	}
	waitAll("the reply after the stop", shownCommitted("fake: after the stop"))

	block := make(chan struct{})
	defer close(block)
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"cut ", "short"}, Block: block})
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "mid-reply"); err != nil {
		t.Fatal(err)
	}
	waitAll("the streaming reply", `(document.querySelector('#stream')?.innerText || '').includes('cut short')`)
	d.kill()
	waitAll("reconnecting after a kill", `document.querySelector('#conn').textContent.startsWith('reconnecting in')`)
	startDaemon(t, fx.home)
	// The new daemon closes the cut turn as interrupted (with the text it
	// had checkpointed, if any), and the pages drop the stream for it.
	waitAll("the turn closed as interrupted", `document.querySelector('#conn').textContent === 'connected' && !document.querySelector('#stream') &&
		document.querySelector('.turn.interrupted')?.textContent.includes('daemon restart')`)
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "last"); err != nil {
		t.Fatal(err)
	}
	waitAll("the last reply", shownCommitted("fake: last"))
	for _, p := range pages {
		wantMessages(t, fx, "s", p.messages())
	}
}

// putMany puts n inputs into session id with conc writers at once.
func putMany(t *testing.T, fx *fixture, id string, n, conc int) {
	t.Helper()
	errs := make(chan error, conc)
	for w := range conc {
		go func() {
			var err error
			for i := w; i < n && err == nil; i += conc {
				_, err = fx.c.PutInput(fx.ctx, id, uuid.Must(uuid.NewV7()).String(), fmt.Sprintf("message %d", i))
			}
			errs <- err
		}()
	}
	for range conc {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// The owner's list is live: a session made elsewhere joins it on top, a
// reply in a session not shown counts as unread and moves it up (the
// owner's own message, sent from elsewhere, does not count), one
// deleted elsewhere leaves; + new makes and opens one (the daemon's
// default provider: TestWebNewSessionWithAProvider chooses); Esc in the
// composer interrupts the running turn; at 360 px the list folds away
// behind its button.
func TestWebSessionListIsLive(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "a", create: wire.SessionCreate{Title: "alpha", Provider: "fake"}})
	if _, err := fx.c.CreateSession(fx.ctx, "b", wire.SessionCreate{Title: "beta"}); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t)
	p := b.open(ownerLink(t, fx.home, "a"))
	order := `[...document.querySelectorAll('#sessions li')].map(li => li.querySelector('.name').textContent).join(',')`
	p.wait("both sessions, the newer first", order+` === 'beta,alpha' && document.querySelector('#title').textContent === 'alpha'`)

	if _, err := fx.c.CreateSession(fx.ctx, "c", wire.SessionCreate{Title: "gamma"}); err != nil {
		t.Fatal(err)
	}
	// The daemon tells the page (a sessions push); unasked, the page
	// reads the list only every 30 s.
	p.waitWithin("a session made elsewhere, on top", order+` === 'gamma,beta,alpha'`, 10*time.Second)
	if _, err := fx.c.PutInput(fx.ctx, "b", uuid.Must(uuid.NewV7()).String(), "news"); err != nil {
		t.Fatal(err)
	}
	p.wait("beta's reply unread, on top", order+`.startsWith('beta') && document.querySelector('#sessions li[data-session=b] .count')?.textContent === '1'`)
	if err := fx.c.DeleteSession(fx.ctx, "c"); err != nil {
		t.Fatal(err)
	}
	p.wait("gamma gone", `!document.querySelector('#sessions li[data-session=c]')`)

	block := make(chan struct{})
	defer close(block)
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"long ", "answer"}, Block: block})
	if _, err := fx.c.PutInput(fx.ctx, "a", uuid.Must(uuid.NewV7()).String(), "go on"); err != nil {
		t.Fatal(err)
	}
	p.wait("a running turn", `(document.querySelector('#stream')?.innerText || '').includes('long answer')`)
	eval[bool](p, `document.querySelector('#input').dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape', bubbles: true}))`)
	p.wait("the interrupted turn", `document.querySelector('.turn.interrupted')?.textContent.includes('user')`)

	p.do(chromedp.Click(chromedp.CSS("#new")), chromedp.Click(chromedp.CSS("#create")))
	p.wait("a new session, open", `document.querySelectorAll('#sessions li').length === 3 && document.querySelector('#sessions li.current .name').textContent === document.querySelector('#title').textContent && document.querySelector('#title').textContent !== 'alpha'`)
	if ss, err := fx.c.Sessions(fx.ctx); err != nil || len(ss) != 3 {
		t.Fatalf("sessions after + new: %d %v", len(ss), err)
	}

	p.do(chromedp.EmulateViewport(360, 740))
	p.wait("the list folded at 360 px", `getComputedStyle(document.querySelector('#toggle')).display !== 'none' &&
		document.querySelector('#sidebar').getBoundingClientRect().right <= 0 && document.documentElement.scrollWidth <= 360`)
	p.do(chromedp.Click(chromedp.CSS("#toggle")))
	p.wait("the list shown", `document.querySelector('#sidebar').getBoundingClientRect().left >= 0`)
	p.screenshot("web-narrow")
}

// New messages are announced to screen readers through a live region; the
// transcript itself is a log, not live (opening a session would read it
// all out).
func TestWebAnnouncesNewMessages(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "a11y"}})
	b := startBrowser(t)
	p := b.open(ownerLink(t, fx.home, "s"))
	p.waitOpen("a11y")
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "hello reader"); err != nil {
		t.Fatal(err)
	}
	p.wait("the reply announced", `document.querySelector('#announce[aria-live=polite]').textContent.includes('assistant echo: echo: hello reader')`)
	if live := eval[string](p, `document.querySelector('#transcript').getAttribute('aria-live') || ''`); live != "" {
		t.Fatalf("the transcript is aria-live=%q", live)
	}
}

// Another link pasted into an open tab (only its fragment changes) opens
// as that link: an owner's tab given a read link becomes a viewer's, and
// the new token leaves the address bar.
func TestWebASecondLinkInTheSameTab(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s"})
	view := shareLink(t, fx.home, "s")
	p := startBrowser(t).open(ownerLink(t, fx.home, "s"))
	p.waitOpen("s")
	p.wait("the owner's page, its token out of the address bar", `albedo.role === 'owner' && location.hash === ''`)
	eval[bool](p, `(location.hash = `+jsString(view[strings.Index(view, "#"):])+`, true)`)
	// The page loads again: a poll that meets the old document's end
	// polls again in the new one.
	const viewer = `window.albedo?.role === 'viewer' && location.hash === '' && document.body.classList.contains('viewer')`
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](viewer, chromedp.WithPollingTimeout(3*time.Second)))
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the read link's page never opened in the tab: %v", err)
		}
	}
}
