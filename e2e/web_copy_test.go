//go:build !e2e_only || e2e_web

package e2e

import (
	"context"
	"strings"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// A fenced code block in a reply gets a copy button. On 127.0.0.1 (a
// secure context) it writes the code to the clipboard, read back here;
// where the page has no clipboard (plain http beyond loopback is not a
// secure context, and navigator.clipboard is undefined there) it selects
// the code for Ctrl-C instead of throwing.
func TestWebCodeBlockCopyButton(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Title: "code", Provider: "fake"}})
	const code = "fmt.Println(\"hi\")\nreturn nil"
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"Here:\n\n```go\n" + code + "\n```\n"}})
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "some code"); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t)
	link := ownerLink(t, fx.home, "s")
	p := b.open(link)
	origin := link[:strings.Index(link, "/#")]
	p.wait("the code block and its button", `!document.querySelector('#stream') &&
		document.querySelector('#transcript article[data-offset] .codeblock button.copy')?.textContent === 'copy'`)

	// The clipboard as a person at the browser has it: permitted, and the
	// page focused (headless Chromium's window never is).
	p.do(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
				Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: cdpbrowser.PermissionSettingGranted, Origin: origin}); err != nil {
				return err
			}
		}
		_, err := cdp.Call(ctx, t, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
		return err
	}))
	p.do(chromedp.Click(chromedp.CSS("#transcript .codeblock button.copy")))
	p.wait("copied", `document.querySelector('#transcript .codeblock button.copy').textContent === 'copied'`)
	p.wait("the clipboard read", `navigator.clipboard.readText().then(t => { window.clipboardText = t; return true })`)
	if got := eval[string](p, `clipboardText`); got != code {
		t.Fatalf("the clipboard holds %q, not the code %q", got, code)
	}

	// No clipboard: the code is selected instead.
	eval[bool](p, `(() => { Object.defineProperty(Navigator.prototype, 'clipboard', {get: () => undefined, configurable: true}); return navigator.clipboard === undefined })()`)
	p.do(chromedp.Click(chromedp.CSS("#transcript .codeblock button.copy")))
	p.wait("the code selected", `document.querySelector('#transcript .codeblock button.copy').textContent === 'selected: press Ctrl-C' &&
		getSelection().toString() === `+jsString(code))
	if ex := p.exceptions(); len(ex) > 0 {
		t.Fatalf("the page threw: %v", ex)
	}
}
