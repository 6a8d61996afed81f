//go:build !e2e_only || e2e_web

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/uuid"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// toolBlock is a condition: the page shows the call of word_count as a
// block in state, after the words the model said before it, with its
// arguments pretty-printed.
func toolBlock(state string) string {
	return `(() => { const b = document.querySelector('.toolcall .tool[data-tool="bot:example/word_count"]');
		return !!b && b.dataset.state === ` + jsString(state) + ` &&
			b.querySelector('.tool-name').textContent === 'bot:example/word_count' &&
			b.querySelector('details.args pre').textContent.includes('"text": "one two three"') &&
			b.closest('.toolcall').querySelector('.msg.said').innerText.includes('Counting.') })()`
}

// decisionButtons counts the page's decision buttons.
const decisionButtons = `document.querySelectorAll('.tool-decide button').length`

// A model's tool call, decided on the page. The fake model calls the
// example bot's word_count; the call asks, so the turn waits. The
// owner's page and a viewer's (a read link) see it come: the block with
// the tool, its arguments and what the model said before it; the owner's
// with Allow, Allow for this session and Deny, and the list, the title
// and the notice saying a decision is needed; the viewer's with no
// buttons. The daemon restarts: both pages reattach, the call still
// waiting, the owner's buttons still there. A member granted write opens
// the page on a phone (360 px) then, so hers is drawn from the session's
// history: the buttons are there, within the screen, and a tap on Allow
// reaches them. The tool runs, the reply completes, and every page shows the
// call allowed by her with its result, and no buttons. A Deny of the
// owner's that raced her Allow (a button the owner's page held from
// before the decision came) is told it was decided already, with no
// error.
func TestWebToolCallIsDecidedOnThePage(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "k", create: wire.SessionCreate{Title: "tools", Provider: "fake"}})
	token := strings.TrimSpace(lastLine(cli(t, fx.home, "bots", "add", "example")))
	startBot(t, fx.home, token, time.Millisecond)
	waitTool(t, fx.ctx, fx.c, "k", "bot:example/word_count")
	_, annLink := writer(t, fx.home, "ann", "k")

	b := startBrowser(t)
	owner := b.open(ownerLink(t, fx.home, "k"))
	viewer := b.open(shareLink(t, fx.home, "k"))
	owner.waitOpen("tools")
	viewer.waitOpen("tools")

	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"Counting."}, ToolCalls: []fakeopenai.ToolCall{
		{ID: "call_1", Name: "bot__example__word_count", Arguments: `{"text":"one two three"}`}}},
		fakeopenai.Reply{Chunks: []string{"Three words."}})
	if _, err := fx.c.PutInput(fx.ctx, "k", uuid.Must(uuid.NewV7()).String(), "@fake how many words?"); err != nil { // a team's session answers mentions
		t.Fatal(err)
	}

	owner.wait("the waiting call, with its buttons", toolBlock("pending")+` && `+decisionButtons+` === 3 &&
		document.querySelector('.tool .tool-state').textContent === 'needs your decision' && !document.querySelector('#stream')`)
	owner.wait("the list, the title and the notice saying so", `document.querySelector('#sessions li[data-session=k].approval .decide')?.textContent === 'decide' &&
		document.title === '(1) decision needed · tools · albedo' && document.querySelector('#notice').textContent.includes('a tool call waits for your decision') &&
		document.querySelector('#settings').textContent.includes('1 tool call waiting for a decision')`)
	viewer.wait("the waiting call, without buttons", toolBlock("pending")+` && `+decisionButtons+` === 0 &&
		document.querySelector('.tool .tool-state').textContent === 'waits for a decision'`)

	// Each page's socket now, to know it reattached through a new one.
	for _, p := range []*page{owner, viewer} {
		eval[bool](p, `(window.before = albedo.client.ws, true)`)
	}
	fx.d.stop()
	startDaemon(t, fx.home)
	for _, p := range []*page{owner, viewer} {
		p.wait("reattached, the call still waiting", `albedo.client.ws && albedo.client.ws !== window.before && albedo.client.ready &&
			document.querySelector('#conn').textContent === 'connected' && `+toolBlock("pending"))
	}
	owner.wait("the buttons, after the restart", decisionButtons+` === 3 && document.querySelector('#settings').textContent.includes('1 tool call waiting for a decision')`)
	viewer.wait("no buttons, after the restart", decisionButtons+` === 0`)

	ann := b.tab()
	ann.do(chromedp.EmulateViewport(360, 740))
	ann.navigate(annLink)
	ann.waitOpen("tools")
	if role := eval[string](ann, `albedo.role`); role != "member" {
		t.Fatalf("ann's page is %q", role)
	}
	ann.wait("the waiting call from the history, its buttons within a phone's screen", toolBlock("pending")+` && `+decisionButtons+` === 3 &&
		document.querySelector('#toggle').classList.contains('attention') &&
		document.documentElement.scrollWidth <= innerWidth && document.querySelector('#transcript').scrollWidth <= document.querySelector('#transcript').clientWidth &&
		[...document.querySelectorAll('.tool-decide button')].every(b => {
			b.scrollIntoView({block: 'nearest'});
			const r = b.getBoundingClientRect();
			return r.width > 0 && r.left >= 0 && r.right <= innerWidth && document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === b;
		})`)

	eval[bool](owner, `(() => { window.staleDeny = document.querySelector('.tool-decide button[data-decision=deny]'); return !!window.staleDeny })()`)
	ann.click(`.tool[data-state=pending] .tool-decide button[data-decision=allow]`)

	done := toolBlock("completed") + ` && ` + decisionButtons + ` === 0 &&
		document.querySelector('.tool .tool-who').textContent === 'allowed by ann' &&
		document.querySelector('.tool details.result pre').textContent === '3 words' &&
		!document.querySelector('#stream') && ` + shownCommitted("Three words.") + ` &&
		document.querySelectorAll('.msg.said').length === 1`
	for _, p := range []*page{ann, owner, viewer} {
		p.wait("the call allowed by ann, its result and the reply", done)
		wantMessages(t, fx, "k", p.messages())
	}
	owner.wait("nothing left to decide", `!document.querySelector('#sessions li.approval') && document.title === 'tools · albedo' &&
		!document.querySelector('#notice').textContent.includes('waits for your decision')`)
	ann.wait("nothing left to decide, on the phone", `!document.querySelector('#toggle').classList.contains('attention')`)

	var approval, result wire.Event
	for _, ev := range events(t, fx.ctx, fx.c, "k") {
		switch ev.Type {
		case wire.EventApproval:
			approval = ev
		case wire.EventToolResult:
			result = ev
		}
	}
	if approval.Decision != wire.DecisionAllow || approval.Author != "ann" {
		t.Fatalf("the approval %+v", approval)
	}

	// Search finds the tool's output; opening the hit marks the call's
	// block, where the output is drawn.
	hit := fmt.Sprintf(`#hits li[data-offset="%d"]`, result.Offset)
	owner.do(chromedp.SendKeys(chromedp.CSS("#search"), "words"+kb.Enter))
	owner.wait("the tool's output among the hits", `document.querySelector('`+hit+` mark')?.textContent === 'words'`)
	owner.do(chromedp.Click(chromedp.CSS(hit + ` button`)))
	owner.wait("the call's block, marked", `document.querySelector('.tool.hit')?.dataset.tool === 'bot:example/word_count'`)
	owner.do(chromedp.SendKeys(chromedp.CSS("#search"), kb.Escape))

	eval[bool](owner, `(window.staleDeny.click(), true)`)
	owner.wait("the late deny, told it was decided already", `document.querySelector('.tool .tool-note')?.textContent === 'already decided by ann' &&
		document.querySelector('.tool').dataset.state === 'completed' && !document.querySelector('#notice').classList.contains('error')`)
	for _, p := range []*page{ann, owner, viewer} {
		if ex := p.exceptions(); len(ex) > 0 {
			t.Fatalf("the page threw: %v", ex)
		}
	}
}
