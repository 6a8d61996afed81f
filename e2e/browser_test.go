package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"albedo/wire"
)

// browser is the package's headless Debian Chromium, driven over the
// DevTools protocol (chromedp), as one test sees it: each page the test
// opens is a tab of its own, closed when the test ends.
type browser struct {
	t   *testing.T
	ctx context.Context
}

// chromium is the one Chromium process the package's tests share, started
// by the first that asks (startBrowser) and stopped by TestMain
// (stopChromium). A Chromium for each test cost a second of CPU at each
// start, on a machine whose two cores the tests beside it need; tabs
// share nothing a test looks at: each has its own sessionStorage (which
// holds the page's token), and each test's daemon is another origin.
var chromium struct {
	once   sync.Once
	ctx    context.Context // the browser's; a tab is chromedp.NewContext(ctx)
	cancel func()
	dir    string // its profile
	err    error
}

// startBrowser returns the package's Chromium for t, starting it if no
// test has yet. The flags are the ones this machine needs: no sandbox (we
// run as root in CI), no GPU, and nothing that reaches for the network on
// its own (there is none).
func startBrowser(t *testing.T) *browser {
	t.Helper()
	skipShort(t, "Chromium")
	chromium.once.Do(func() { chromium.err = launchChromium() })
	if chromium.err != nil {
		t.Fatal(chromium.err)
	}
	return &browser{t: t, ctx: chromium.ctx}
}

func launchChromium() error {
	exe := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		return errors.New("Chromium is required for this test: apt-get install chromium (.ci/run installs it)")
	}
	dir, err := os.MkdirTemp("", "albedo-e2e-chromium-")
	if err != nil {
		return err
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(dir),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1200, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	if err := chromedp.Do(bctx); err != nil { // starts the browser
		cancelBrowser()
		cancelAlloc()
		os.RemoveAll(dir)
		return fmt.Errorf("start Chromium: %v", err)
	}
	chromium.ctx, chromium.dir = bctx, dir
	chromium.cancel = func() { cancelBrowser(); cancelAlloc() }
	return nil
}

// stopChromium stops the package's Chromium, if a test started it, and
// removes its profile. Called by TestMain once the tests are done.
func stopChromium() {
	if chromium.cancel != nil {
		chromium.cancel()
		os.RemoveAll(chromium.dir)
	}
}

// page is one tab, and what its scripts logged and threw (shown when a
// test fails).
type page struct {
	t      *testing.T
	ctx    context.Context
	cancel context.CancelFunc // closes the tab

	mu   sync.Mutex
	logs []string
}

// listen records the tab's console messages and uncaught exceptions.
func (p *page) listen() {
	err := chromedp.Listen(p.ctx, func(ev any) {
		var line string
		switch ev := ev.(type) {
		case *cdpruntime.EventConsoleAPICalled:
			var args []string
			for _, a := range ev.Args {
				if a.Description != "" {
					args = append(args, a.Description)
				} else {
					args = append(args, string(a.Value))
				}
			}
			line = fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " "))
		case *cdpruntime.EventExceptionThrown:
			d := ev.ExceptionDetails
			line = fmt.Sprintf("exception %s:%d: %s", d.URL, d.LineNumber+1, d.Text)
			if d.Exception != nil {
				line += " " + d.Exception.Description
			}
		default:
			return
		}
		p.mu.Lock()
		p.logs = append(p.logs, line)
		p.mu.Unlock()
	})
	if err != nil {
		p.t.Fatalf("listen to the page: %v", err)
	}
	p.t.Cleanup(func() {
		if p.t.Failed() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.t.Logf("the page's console:\n%s", strings.Join(p.logs, "\n"))
		}
	})
}

// exceptions returns the uncaught exceptions the tab's scripts threw.
func (p *page) exceptions() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range p.logs {
		if strings.HasPrefix(l, "exception ") {
			out = append(out, l)
		}
	}
	return out
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// open loads url in a new tab.
func (b *browser) open(url string) *page {
	b.t.Helper()
	p := b.tab()
	p.navigate(url)
	return p
}

// tab opens a blank tab, for a test that listens to it before it loads a
// page (recordSockets).
func (b *browser) tab() *page {
	b.t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	b.t.Cleanup(cancel)
	p := &page{t: b.t, ctx: ctx, cancel: cancel}
	p.listen()
	return p
}

// navigate loads url in the tab.
func (p *page) navigate(url string) {
	p.t.Helper()
	p.do(chromedp.Navigate(url))
}

// close closes the tab.
func (p *page) close() { p.cancel() }

// do runs steps in the page, within a deadline.
func (p *page) do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// click clicks, as a mouse does, the element the selector sel finds. The
// page may draw that element again between chromedp's query and its
// click (a waiting call's block is redrawn once its expiry, or the
// session's workspace, becomes known): the node it found is gone then,
// and the click goes to the element in its place, found again.
func (p *page) click(sel string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	for {
		err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)))
		var gone *cdproto.Error
		if err == nil {
			return
		}
		if !errors.As(err, &gone) || gone.Message != "Could not find node with given id" || ctx.Err() != nil {
			p.t.Fatalf("browser: click %s: %v", sel, err)
		}
	}
}

// eval runs a JavaScript expression in the page and returns its value.
func eval[T any](p *page, js string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// wait waits until the expression is true in the page, checking on every
// animation frame (chromedp.Poll), within a deadline.
func (p *page) wait(what, js string) {
	p.t.Helper()
	p.waitWithin(what, js, 30*time.Second)
}

// waitWithin is wait with the deadline d, for what must happen that soon.
func (p *page) waitWithin(what, js string, d time.Duration, opts ...chromedp.PollOption) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, d+5*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](js, append([]chromedp.PollOption{chromedp.WithPollingTimeout(d)}, opts...)...)); err != nil {
		sctx, scancel := context.WithTimeout(p.ctx, 5*time.Second)
		defer scancel()
		body, _ := chromedp.Run(sctx, chromedp.Evaluate[string](`document.body.innerText`))
		p.t.Fatalf("the page never showed %s (%s): %v\n%s", what, js, err, body)
	}
}

// waitOpen waits until the page is connected and shows the session
// titled title. "connected" alone is not enough: the page lists its
// sessions after the socket's hello, so a daemon stopped in between
// leaves a page with no session open until it comes back.
func (p *page) waitOpen(title string) {
	p.t.Helper()
	p.wait("session "+title+" open", fmt.Sprintf(`document.querySelector('#conn').textContent === 'connected' && document.querySelector('#title').textContent === %q`, title))
}

// text returns the page's visible text.
func (p *page) text() string { return eval[string](p, `document.body.innerText`) }

// screenshots, when set, keeps the pages' screenshots in docs/img for the
// README: go test ./e2e -run TestWeb -screenshots. Without it they are
// taken all the same, into the test's temporary directory.
var screenshots = flag.Bool("screenshots", false, "write the browser tests' screenshots to docs/img")

// screenshot saves the page as NAME.png: in docs/img with -screenshots.
func (p *page) screenshot(name string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("screenshot: %v", err)
	}
	dir := p.t.TempDir()
	if *screenshots {
		dir = filepath.Join("..", "docs", "img")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// ownerLink is albedo open's link to session on home.
func ownerLink(t *testing.T, home, session string) string {
	t.Helper()
	return strings.TrimSpace(lastLine(cli(t, home, "open", "--print", session)))
}

// alphaBetaPage is a daemon with two sessions, a ("alpha") and b
// ("beta"), and an owner's page open on alpha with both listed.
func alphaBetaPage(t *testing.T) (*fixture, *page) {
	t.Helper()
	fx := newFixture(t, fixtureOpts{session: "a", create: wire.SessionCreate{Title: "alpha"}})
	if _, err := fx.c.CreateSession(fx.ctx, "b", wire.SessionCreate{Title: "beta"}); err != nil {
		t.Fatal(err)
	}
	p := startBrowser(t).open(ownerLink(t, fx.home, "a"))
	p.waitOpen("alpha")
	p.wait("both listed", `document.querySelectorAll('#sessions li').length === 2`)
	return fx, p
}

// pressEnter presses Enter in the element sel selects.
func pressEnter(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.SendKeys(chromedp.CSS(sel), kb.Enter)
}
