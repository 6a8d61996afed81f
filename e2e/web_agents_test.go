//go:build !e2e_only || e2e_web

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"albedo/wire"
)

// sendOnPage types text in the page's composer and sends it with Enter.
func sendOnPage(p *page, text string) {
	p.t.Helper()
	eval[bool](p, `(() => { const i = document.querySelector('#input'); i.focus(); i.value = `+jsString(text)+`; return true })()`)
	p.do(pressEnter("#input"))
}

// enterOn focuses the element the selector sel finds and presses Enter,
// as a keyboard does (chromedp's SendKeys waits forever for a summary
// the page made: its DOM mirror does not see into a new <details>).
func enterOn(p *page, sel string) {
	p.t.Helper()
	if !eval[bool](p, `(() => { const el = document.querySelector(`+jsString(sel)+`); el.focus(); return document.activeElement === el })()`) {
		p.t.Fatalf("%s takes no focus", sel)
	}
	p.do(chromedp.KeyEvent(kb.Enter))
}

// agentBlock is a JavaScript expression: the block of the agent's call
// with that tool (the newest, if it made several).
func agentBlock(tool string) string {
	return `[...document.querySelectorAll('.toolcall .tool.agent[data-tool=` + jsString(tool) + `]')].pop()`
}

// diffOf is a JavaScript expression: the lines of the diff in block b's
// fold key, each as "kind|text".
func diffOf(key string) string {
	return `[...b.querySelectorAll('details.` + key + ` pre.diff > .diff-line')].map(l => l.className.replace('diff-line diff-', '') + '|' + l.textContent).join('\n')`
}

// fitsPhone is a condition: nothing on the page is wider than its screen.
const fitsPhone = `document.documentElement.scrollWidth <= innerWidth &&
	document.querySelector('#transcript').scrollWidth <= document.querySelector('#transcript').clientWidth &&
	document.querySelector('#plan').scrollWidth <= document.querySelector('#plan').clientWidth`

// A coding agent's session on the page, on a phone's screen (360 px). The
// fake agent's hello leaves its plan, a checklist over the composer, with
// the step in progress and the one to do. Its thinking, pushed in a
// status, is a folded "Thinking…" line that Enter opens, and a command's
// output whose call has no block shows below the reply; both go with the
// status that no longer carries them, and their markup is text. An edit
// waits for a decision: its block is headed by the agent's title, its
// kind a label, with its file relative to the workspace and its diff
// coloured by line; Allow on the page lets it run, the file changes, the
// daemon's write shows as an acp:fs_write block with its diff, the notice
// of how the agent was answered follows the edit's block, and the reply
// comes. A second edit, of a file whose name and new text are markup,
// shows them as text, its long diff folded (Enter opens it); Deny leaves
// the file alone. A command's output shows live in its call's block, and
// goes when the command ends.
func TestWebAgentSessionShowsItsDoings(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{agent: true, session: "k", create: wire.SessionCreate{Title: "agent"}})
	home, ws, d := fx.home, fx.ws, fx.d
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the daemon's log:\n%s", d.logText())
		}
	})

	p := startBrowser(t).tab()
	p.do(chromedp.EmulateViewport(360, 740))
	p.navigate(ownerLink(t, home, "k"))
	p.waitOpen("agent")
	// The session's status pushes reach the page's handler with what the
	// test adds to their agent (addAgent): the fake agent has no command
	// that thinks and then waits, and a status the test pushed alone
	// would be undone by the daemon's next.
	eval[bool](p, `(() => { const h = albedo.client.subs.get('k').handler; const real = h.status;
		h.status = (f) => { window.lastStatus = f; real(window.added ? {...f, agent: {...f.agent, ...window.added}} : f) };
		window.addAgent = (x) => { window.added = x; if (window.lastStatus) h.status(window.lastStatus) };
		return true })()`)

	// The plan, kept after the turn; no thinking once the turn is over.
	sendOnPage(p, "hello")
	p.wait("the plan, and the reply", `(() => { const plan = document.querySelector('#plan');
		const items = [...plan.querySelectorAll('ol > li')].map(li => li.dataset.status + '|' + li.querySelector('.plan-text').textContent);
		return !plan.hidden && plan.open && items.join() === 'in_progress|say hello,pending|stop' &&
			plan.querySelector('summary').textContent === 'Plan · 0 of 2 done · say hello' &&
			getComputedStyle(plan.querySelector('li[data-status=in_progress] .plan-mark')).backgroundImage.includes('gradient') &&
			plan.getBoundingClientRect().bottom <= document.querySelector('#composer').getBoundingClientRect().top &&
			`+shownCommitted("Hello from the agent.")+` && !document.querySelector('#transcript .thinking') &&
			albedo.views.get('k').status.phase === 'idle' })()`)
	p.wait("the plan within the screen", fitsPhone)
	// Enter on its summary folds the plan, and unfolds it.
	enterOn(p, "#plan > summary")
	p.wait("the plan folded", `!document.querySelector('#plan').open && !document.querySelector('#plan').hidden`)
	enterOn(p, "#plan > summary")
	p.wait("the plan unfolded", `document.querySelector('#plan').open`)

	// Thinking, and output of a call with no block, in the status.
	eval[bool](p, `(addAgent({thought: '<img src=x onerror="window.pwned=1">deep thought', output: {call_id: 'no-such-call', text: '<b>out</b>\nmore'}}), true)`)
	p.wait("the thinking, folded, and the output below the reply", `(() => { const th = document.querySelector('#transcript .thinking');
		const out = document.querySelector('#transcript .agent-output pre');
		return !!th && !th.open && th.querySelector('summary').textContent === 'Thinking…' &&
			th.querySelector('.thought').textContent === '<img src=x onerror="window.pwned=1">deep thought' &&
			!th.querySelector('.thought').checkVisibility() &&
			!!out && out.textContent === '<b>out</b>\nmore' && !document.querySelector('#transcript img, #transcript .agent-output b') &&
			document.querySelector('#transcript').lastElementChild === out.parentElement })()`)
	enterOn(p, "#transcript .thinking > summary")
	p.wait("the thinking, opened by Enter", `(() => { const th = document.querySelector('#transcript .thinking');
		return !!th && th.open && th.querySelector('.thought').checkVisibility() && th.querySelector('.thought').innerText.includes('deep thought') })()`)
	eval[bool](p, `(addAgent(null), true)`)
	p.wait("no thinking and no output once the status carries none", `!document.querySelector('#transcript .thinking, #transcript .agent-output') && !document.querySelector('#plan').hidden`)

	// An edit, decided on the page.
	write("a.txt", "old\n")
	sendOnPage(p, "edit a.txt new words")
	wantDiff := "file|--- a/a.txt\nfile|+++ b/a.txt\nhunk|@@ -1 +1 @@\ndel|-old\nadd|+new words"
	p.wait("the pending edit, its title, file and diff", `(() => { const b = `+agentBlock("acp:edit")+`;
		if (!b || b.dataset.state !== 'pending') return false;
		const paths = [...b.querySelectorAll('.tool-files .tool-path')];
		const pre = b.querySelector('details.diff pre.diff');
		const add = pre?.querySelector('.diff-add'), del = pre?.querySelector('.diff-del'), hunk = pre?.querySelector('.diff-hunk');
		if (!add || !del || !hunk) return false;
		const style = (el) => getComputedStyle(el);
		return b.querySelector('.tool-title').textContent === 'Edit a.txt' && b.querySelector('.tool-kind').textContent === 'edit' &&
			paths.length === 1 && paths[0].textContent === 'a.txt' && paths[0].title === `+jsString(filepath.Join(ws, "a.txt"))+` &&
			b.querySelector('details.diff').open && `+diffOf("diff")+` === `+jsString(wantDiff)+` &&
			style(pre).fontFamily.includes('monospace') &&
			style(add).color !== style(del).color && style(add).color !== style(pre).color && style(del).color !== style(pre).color &&
			style(add).backgroundColor !== 'rgba(0, 0, 0, 0)' && style(del).backgroundColor !== 'rgba(0, 0, 0, 0)' &&
			style(hunk).color === style(b.querySelector('.tool-files')).color &&
			!b.querySelector('details.args').open &&
			b.querySelectorAll('.tool-decide button').length === 3 })()`)
	p.wait("the edit's block within the screen, Allow reachable", fitsPhone+` && (() => { const a = `+agentBlock("acp:edit")+`.querySelector('.tool-decide button[data-decision=allow]');
		a.scrollIntoView({block: 'nearest'}); const r = a.getBoundingClientRect();
		return r.left >= 0 && r.right <= innerWidth && document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === a })()`)
	p.click(`.tool.agent[data-tool="acp:edit"][data-state=pending] .tool-decide button[data-decision=allow]`)

	wantWrite := "file|--- a/a.txt\nfile|+++ b/a.txt\nhunk|@@ -1 +1 @@\ndel|-old\nadd|+new words"
	p.wait("the edit allowed, the write with its diff, the notice and the reply", `(() => { let b = `+agentBlock("acp:edit")+`;
		if (!b || b.dataset.state !== 'completed' || b.querySelector('.tool-decide')) return false;
		const edit = b;
		const notice = edit.closest('.toolcall').nextElementSibling;
		b = `+agentBlock("acp:fs_write")+`;
		return !!b && b.dataset.state === 'completed' && b.querySelector('.tool-title').textContent === 'Write a.txt' &&
			b.querySelector('.tool-kind').textContent === 'fs_write' && b.querySelector('.tool-files .tool-path')?.textContent === 'a.txt' &&
			`+diffOf("diff")+` === `+jsString(wantWrite)+` && !b.querySelector('details.result-diff') &&
			b.querySelector('details.result pre')?.textContent === 'wrote 10 bytes to a.txt' &&
			!!notice && notice.matches('p.notice-line') && notice.dataset.call === edit.dataset.call &&
			notice.textContent === 'The agent\'s request was answered “Allow” (allow_once).' &&
			getComputedStyle(notice).fontStyle === 'italic' &&
			`+shownCommitted("edited a.txt")+` })()`)
	if got, err := os.ReadFile(filepath.Join(ws, "a.txt")); err != nil || string(got) != "new words\n" {
		t.Fatalf("a.txt holds %q (%v)", got, err)
	}
	p.screenshot("web-agent")

	// An edit whose file name and text are markup, and whose diff is
	// long: text all of it, folded; denied. The agent says it runs before
	// it asks (as opencode does): one block all the same.
	evil := "<b>b.txt"
	write(evil, strings.Repeat("old line\n", 12))
	sendOnPage(p, "edit_running "+evil+" <img src=x onerror=window.pwned=2>")
	p.wait("the second edit, its markup as text, its diff folded", `(() => { const b = `+agentBlock("acp:edit")+`;
		if (!b || b.dataset.state !== 'pending') return false;
		const fold = b.querySelector('details.diff');
		return !!fold && b.querySelector('.tool-title').textContent === 'Edit <b>b.txt' &&
			b.querySelector('.tool-files .tool-path')?.textContent === '<b>b.txt' &&
			!fold.open && fold.querySelector('summary').textContent.startsWith('diff +1 −12 · 16 lines') &&
			[...fold.querySelectorAll('.diff-add')].map(l => l.textContent).join() === '+<img src=x onerror=window.pwned=2>' &&
			fold.querySelectorAll('.diff-del').length === 12 &&
			!b.querySelector('b, img, [onerror]') })()`)
	enterOn(p, `.tool.agent[data-tool="acp:edit"][data-state=pending] details.diff > summary`)
	p.wait("the long diff, opened by Enter", `(() => { const b = `+agentBlock("acp:edit")+`; const f = b.querySelector('details.diff');
		return !!f?.open && !!f.querySelector('.diff-add')?.checkVisibility() })()`)
	p.click(`.tool.agent[data-tool="acp:edit"][data-state=pending] .tool-decide button[data-decision=deny]`)
	p.wait("the edit denied, and said", `(() => { const b = `+agentBlock("acp:edit")+`;
		const notice = b.closest('.toolcall').nextElementSibling;
		return b.dataset.state === 'denied' && !!notice && notice.textContent === 'The agent\'s request was answered “Reject” (reject_once).' &&
			document.querySelectorAll('.tool.agent[data-tool="acp:edit"]').length === 2 &&
			`+shownCommitted("I was not allowed to edit")+` })()`)
	if got, err := os.ReadFile(filepath.Join(ws, evil)); err != nil || string(got) != strings.Repeat("old line\n", 12) {
		t.Fatalf("%s holds %q (%v)", evil, got, err)
	}

	// A command's output, live in its call's block.
	write("slow.sh", "echo 'first <i>line</i>'\nwhile [ ! -e go ]; do sleep 0.05; done\necho 'last line'\n")
	sendOnPage(p, "run sh slow.sh")
	p.wait("the command's output so far, in its block", `(() => { const b = `+agentBlock("acp:terminal")+`;
		const live = b && b.querySelector('.tool-live pre');
		return !!live && b.dataset.state === 'running' && b.querySelector('.tool-title').textContent === 'sh slow.sh' &&
			live.textContent === 'first <i>line</i>\n' && !live.querySelector('i') &&
			!document.querySelector('#transcript .agent-output') })()`)
	write("go", "")
	p.wait("the command ended, its output gone, the reply", `(() => { const b = `+agentBlock("acp:terminal")+`;
		return b.dataset.state === 'completed' && !document.querySelector('.tool-live, .agent-output') &&
			b.querySelector('details.result pre')?.textContent === 'first <i>line</i>\nlast line\n' &&
			`+shownCommitted("output: first")+` })()`)

	if got := eval[any](p, `window.pwned ?? null`); got != nil {
		t.Fatalf("a script ran: window.pwned = %v", got)
	}
	if ex := p.exceptions(); len(ex) > 0 {
		t.Fatalf("the page threw: %v", ex)
	}
}
