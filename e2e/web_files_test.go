//go:build !e2e_only || e2e_web

package e2e

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/uuid"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// pasteScreenshot pastes a 64×48 PNG, drawn on a canvas, into the
// composer: a paste event whose clipboard holds it as a file, as a
// browser's holds a screenshot (named image.png).
const pasteScreenshot = `(() => {
	const c = document.createElement('canvas');
	c.width = 64;
	c.height = 48;
	const g = c.getContext('2d');
	g.fillStyle = '#0b6e99';
	g.fillRect(0, 0, 64, 48);
	g.fillStyle = '#ffcc00';
	g.fillRect(8, 8, 24, 16);
	c.toBlob((b) => {
		const dt = new DataTransfer();
		dt.items.add(new File([b], 'image.png', {type: 'image/png'}));
		const input = document.querySelector('#input');
		input.focus();
		input.dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true}));
	}, 'image/png');
	return true;
})()`

// shownImage is a condition: a message holding text shows its attached
// image inline, drawn from a blob: URL the page made, 64 pixels wide.
func shownImage(text string) string {
	return `[...document.querySelectorAll('#transcript article[data-offset]')].some(a => a.innerText.includes(` + jsString(text) + `) &&
		[...a.querySelectorAll('.attachments .file-image[data-state=shown] img')].some(i => i.src.startsWith('blob:') && i.complete && i.naturalWidth === 64 && i.naturalHeight === 48))`
}

// noTokenInURLs is a condition: no request the page made carried a token
// in its URL.
const noTokenInURLs = `performance.getEntriesByType('resource').every(e => !/token|bearer|al(sess|view|guest|mem|own|bot)_/i.test(e.name))`

// Files on the page. The owner pastes a screenshot into the composer
// (its chip shows a thumbnail) and sends it with a text: the model gets
// it as an image_url part whose data: URL holds the PNG, and the owner's
// page and a viewer's (a read link) show it inline, from bytes each read
// with its token in Authorization, never one in a URL; a click opens it
// full size and Esc closes it. A text file picked with the file picker
// is sent alone, Enter pressed while its upload is held: the message
// goes once the upload is done, a card (name, type, size) on both pages,
// and a click on the card downloads the file's bytes. A file past the
// daemon's max_attachment_bytes shows the daemon's reason on its chip,
// and nothing is sent; a drop of 17 files attaches 16 and says why not
// the last.
func TestWebFiles(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	fake := withFake(t, home)
	startDaemon(t, home, "--max-attachment-bytes", "65536")
	c := newClient(t, home)
	ctx := ctxT(t)
	if _, err := c.CreateSession(ctx, "f", wire.SessionCreate{Title: "files", Provider: "fake"}); err != nil {
		t.Fatal(err)
	}
	fake.Push(fakeopenai.Reply{Chunks: []string{"A blue screenshot."}}, fakeopenai.Reply{Chunks: []string{"Your notes."}})

	b := startBrowser(t)
	owner := b.open(ownerLink(t, home, "f"))
	owner.waitOpen("files")

	// The screenshot, pasted, then sent with a text (Enter may come
	// before its upload is done).
	eval[bool](owner, pasteScreenshot)
	owner.wait("the screenshot's chip, with its thumbnail", `(() => { const c = document.querySelector('#attachments li.chip');
		return !!c && c.querySelector('.chip-name').textContent === 'screenshot.png' && c.querySelector('img.thumb')?.src.startsWith('blob:') })()`)
	const ask = "what is in this screenshot?"
	owner.do(chromedp.SendKeys(chromedp.CSS("#input"), ask))
	owner.do(pressEnter("#input"))
	// (The input may hold a newline: chromedp types Enter's character
	// apart from its keydown, which the page's preventDefault cannot stop.)
	owner.wait("the screenshot inline, and the reply", shownImage(ask)+` && `+shownCommitted("A blue screenshot.")+` &&
		document.querySelector('#attachments').hidden && document.querySelector('#input').value.trim() === ''`)

	// What the model was sent: the text and the image, a PNG as pasted.
	var sent []string
	for _, r := range fake.Requests() {
		for i := range r.Messages {
			if m, ok := r.UserMessage(i); ok && strings.Contains(m.Text, ask) {
				sent = m.Images
			}
		}
	}
	const prefix = "data:image/png;base64,"
	if len(sent) != 1 || !strings.HasPrefix(sent[0], prefix) {
		t.Fatalf("the model was sent the images %.200q, want one PNG", sent)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sent[0], prefix))
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(raw)); err != nil || cfg.Width != 64 || cfg.Height != 48 {
		t.Fatalf("the image sent is no 64×48 PNG: %+v, %v", cfg, err)
	}

	viewer := b.open(shareLink(t, home, "f"))
	viewer.wait("the screenshot inline, on a read link", `document.querySelector('#conn').textContent === 'connected' && `+shownImage(ask))

	// Full size, over the page; Esc closes it.
	owner.do(chromedp.Click(chromedp.CSS(`#transcript .file-image[data-state=shown]`)))
	owner.wait("the image full size", `(() => { const i = document.querySelector('dialog.lightbox[open] img'); return !!i && i.complete && i.naturalWidth === 64 })()`)
	owner.do(chromedp.KeyEvent(kb.Escape))
	owner.wait("the image closed", `!document.querySelector('dialog.lightbox')`)

	// A text file, picked and sent alone. Its upload is held (the page's
	// XMLHttpRequest waits for the test): Enter sends once it is done,
	// not before.
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	const content = "hello from the notes\n"
	if err := os.WriteFile(notes, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	eval[bool](owner, `(() => {
		const send = XMLHttpRequest.prototype.send;
		let held = [];
		window.releaseUploads = () => { for (const f of held) f(); held = null; };
		XMLHttpRequest.prototype.send = function (body) { if (held) held.push(() => send.call(this, body)); else send.call(this, body); };
		return true;
	})()`)
	owner.do(chromedp.SetUploadFiles(chromedp.CSS("#files"), []string{notes}))
	owner.wait("the notes' chip, uploading", `(() => { const c = document.querySelector('#attachments li.chip[data-state=uploading]');
		return !!c && c.querySelector('.chip-name').textContent === 'notes.txt' && !c.querySelector('img') && !c.querySelector('progress').hidden })()`)
	owner.do(pressEnter("#input"))
	owner.wait("the send waiting for the upload", `document.querySelector('#pending').textContent === 'sends once the files are uploaded…' && albedo.client.pending.size === 0`)
	if n := len(waitInputs(t, c, "f", 1)); n != 1 {
		t.Fatalf("%d inputs while the upload is held", n)
	}
	eval[bool](owner, `(window.releaseUploads(), true)`)
	card := fmt.Sprintf(`(() => { const c = document.querySelector('#transcript article[data-role=user] .attachments .file-card');
		return !!c && c.querySelector('.file-name').textContent === 'notes.txt' && c.querySelector('.file-meta').textContent === 'text/plain · %d B' })()`, len(content))
	for _, p := range []*page{owner, viewer} {
		p.wait("the notes as a card, and the reply", card+` && `+shownCommitted("Your notes."))
	}
	owner.screenshot("web-files")

	// A click downloads it: the link the page clicks is a blob: URL that
	// holds the file's bytes, named as the file. (The page's policy lets
	// nothing fetch a blob: URL, so its Blob is kept as it is made.)
	eval[bool](viewer, `(() => {
		const made = new Map();
		const create = URL.createObjectURL;
		URL.createObjectURL = (b) => { const u = create(b); made.set(u, b); return u; };
		const click = HTMLAnchorElement.prototype.click;
		HTMLAnchorElement.prototype.click = function () {
			if (!this.download) return click.call(this);
			window.saved = {name: this.download, href: this.href};
			made.get(this.href)?.text().then(t => { window.saved.text = t; });
		};
		return true;
	})()`)
	viewer.do(chromedp.Click(chromedp.CSS(`#transcript .file-card`)))
	viewer.wait("the download", `window.saved?.name === 'notes.txt' && window.saved.href.startsWith('blob:') && window.saved.text === `+jsString(content))

	// A file past max_attachment_bytes fails on its chip, with the
	// daemon's reason, and what is typed is not sent.
	big := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(big, bytes.Repeat([]byte{0xa5, 0x5a, 0x01}, 40000), 0o600); err != nil {
		t.Fatal(err)
	}
	owner.do(chromedp.SetUploadFiles(chromedp.CSS("#files"), []string{big}))
	owner.wait("the too large file's error", `(() => { const c = document.querySelector('#attachments li.chip[data-state=failed]');
		return !!c && c.querySelector('.chip-name').textContent === 'big.bin' && c.querySelector('.chip-note').textContent.includes('max_attachment_bytes') &&
			!c.querySelector('.retry').hidden })()`)
	owner.do(chromedp.SendKeys(chromedp.CSS("#input"), "not yet"))
	owner.do(pressEnter("#input"))
	owner.wait("the send refused", `document.querySelector('#notice').textContent.startsWith('not sent: a file did not upload') &&
		document.querySelector('#input').value.trim() === 'not yet'`)
	owner.do(chromedp.Click(chromedp.CSS(`#attachments li.chip[data-state=failed] button.remove`)))
	owner.wait("the chip gone", `document.querySelector('#attachments').hidden && document.querySelectorAll('#attachments li').length === 0`)

	// 17 files dropped on the transcript: 16 are attached.
	eval[bool](owner, `(() => {
		const dt = new DataTransfer();
		for (let i = 1; i <= 17; i++) dt.items.add(new File(['file ' + i + '\n'], 'f' + i + '.txt', {type: 'text/plain'}));
		document.querySelector('#transcript').dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
		return true;
	})()`)
	owner.wait("16 files attached, and why not the 17th", `document.querySelectorAll('#attachments li.chip').length === 16 &&
		document.querySelector('#notice').textContent.includes('at most 16 files: 1 not attached') &&
		[...document.querySelectorAll('#attachments li.chip')].every(c => c.dataset.state === 'done')`)

	var msgs []wire.Event
	for _, ev := range events(t, ctx, c, "f") {
		if ev.Type == wire.EventMessage && ev.Role == wire.RoleUser {
			msgs = append(msgs, ev)
		}
	}
	if len(msgs) != 2 || msgs[0].Text != ask || len(msgs[0].Attachments) != 1 || msgs[0].Attachments[0].Name != "screenshot.png" || msgs[0].Attachments[0].MIME != "image/png" ||
		msgs[1].Text != "" || len(msgs[1].Attachments) != 1 || msgs[1].Attachments[0].Name != "notes.txt" {
		t.Fatalf("the user's messages: %+v", msgs)
	}
	for _, p := range []*page{owner, viewer} {
		p.wait("no token in a URL", noTokenInURLs)
		if ex := p.exceptions(); len(ex) > 0 {
			t.Fatalf("the page threw: %v", ex)
		}
	}
}

// Edit on a message that carries files: its fork's composer holds the
// text and the files, as chips the store has already (an image's with
// its thumbnail), and the message sent from it carries them again.
func TestWebEditKeepsAMessagesFiles(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s"})
	shot := filepath.Join(t.TempDir(), "bug.png")
	if err := os.WriteFile(shot, screenshot(64, 48), 0o600); err != nil {
		t.Fatal(err)
	}
	att, err := fx.c.PutFile(fx.ctx, shot)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.NewString(), "see the bug", att); err != nil {
		t.Fatal(err)
	}
	waitTurnsClosed(t, fx.ctx, fx.c, "s", 1)
	p := startBrowser(t).open(ownerLink(t, fx.home, "s"))
	p.waitOpen("s")
	p.wait("the message and its image", shownImage("see the bug"))
	eval[bool](p, `(document.querySelector('article[data-role=user] .msg-actions button[data-act=edit]').click(), true)`)
	p.wait("the fork's composer, with the text and the image", `(() => { const c = document.querySelector('#attachments li.chip');
		return window.albedo.current !== 's' && document.querySelector('#input').value === 'see the bug' && !document.querySelector('#attachments').hidden &&
			document.querySelectorAll('#attachments li.chip').length === 1 && c.dataset.state === 'done' &&
			c.querySelector('.chip-name').textContent === 'bug.png' && c.querySelector('img.thumb')?.src.startsWith('blob:') })()`)
	fork := eval[string](p, `window.albedo.current`)
	eval[bool](p, `(document.querySelector('#input').value = 'see the bug, edited', document.querySelector('#send').click(), true)`)
	var sent wire.Event
	for _, ev := range waitTurnsClosed(t, fx.ctx, fx.c, fork, 1) {
		if ev.Type == wire.EventMessage && ev.Role == wire.RoleUser {
			sent = ev
		}
	}
	if sent.Text != "see the bug, edited" || len(sent.Attachments) != 1 || sent.Attachments[0] != att {
		t.Fatalf("the edited message %+v, want it to carry %+v", sent, att)
	}
	if ex := p.exceptions(); len(ex) > 0 {
		t.Fatalf("the page threw: %v", ex)
	}
}
