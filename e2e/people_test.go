//go:build !e2e_only || e2e_web

package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"albedo/client"
	"albedo/wire"
)

// Three people in one session at once: the owner in the terminal, a
// member with write access on the page, and someone with a read link in
// albedo attach. Each one's messages show their author in the others;
// presence names all three, and the member's typing shows in the
// terminal; removing the member cuts their page within a second, and their
// token is refused after that.
func TestThreePeopleInOneSession(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "together"}})
	ms, err := fx.c.Members(fx.ctx)
	if err != nil || len(ms) != 1 {
		t.Fatalf("members %+v: %v", ms, err)
	}
	owner := ms[0].Name
	var annLink, annToken string
	for _, l := range strings.Split(cli(t, fx.home, "members", "add", "ann"), "\n") {
		if strings.Contains(l, "/#token=") {
			annLink = strings.TrimSpace(l)
		}
		if strings.HasPrefix(l, "almem_") {
			annToken = strings.TrimSpace(l)
		}
	}
	// The link carries the home's key (#k=), as albedo open's do.
	if annLink == "" || annToken == "" || !strings.Contains(annLink, "/#token="+annToken+"&k=") {
		t.Fatalf("members add printed no link and token (%q, %q)", annLink, annToken)
	}
	cli(t, fx.home, "sessions", "grant", "s", "ann", "write")

	term := startTmux(t, fx.home, 140, 30)
	term.waitPane("the owner's terminal", has("together"))
	p := startBrowser(t).open(annLink)
	p.waitOpen("together")
	if role := eval[string](p, `albedo.role`); role != "member" {
		t.Fatalf("ann's page is %q", role)
	}
	viewer := startTmux(t, fx.home, 140, 30, "attach", shareLink(t, fx.home, "s"))
	presence := "watching: " + owner + ", ann, viewer"
	term.waitPane("presence of all three in the terminal", has(presence))
	viewer.waitPane("presence of all three in attach", has(presence))
	p.wait("presence of all three on the page", `document.querySelector('#presence').textContent === `+jsString(presence))

	term.keys("-l", "hello from the terminal")
	term.keys("Enter")
	p.do(chromedp.SendKeys(chromedp.CSS("#input"), "hello from the page"))
	term.waitPane("ann typing, in the terminal", has("ann ✎"))
	p.do(pressEnter("#input"))
	for _, x := range []*tmux{term, viewer} {
		x.waitPane("ann's message with her name", has("user · ann"))
	}
	viewer.waitPane("the owner's message with their name", has("user · "+owner))
	p.wait("the owner's message with their name on the page", `[...document.querySelectorAll('#transcript article[data-role=user]')].some(a => a.innerText.includes(`+jsString("user · "+owner)+`))`)

	cli(t, fx.home, "members", "rm", "ann")
	p.waitWithin("ann's page cut", `document.querySelector('#conn').textContent === 'disconnected'`, time.Second)
	c, err := client.New(client.Options{Home: fx.home, Token: annToken})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SessionsPage(fx.ctx, "", 1); client.Code(err) != wire.CodeUnauthorized {
		t.Fatalf("ann's token after her removal: %v", err)
	}
	term.keys("C-q")
	viewer.keys("C-q")
}

// A restart gives daemon.json a new token and refuses the old one; a page
// open across it reconnects through its own token, with no gap.
func TestRestartChangesDaemonJSONToken(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "restarted"}})
	before, err := client.ReadDaemonFile(fx.home)
	if err != nil {
		t.Fatal(err)
	}
	p := startBrowser(t).open(ownerLink(t, fx.home, "s"))
	p.waitOpen("restarted")
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "one"); err != nil {
		t.Fatal(err)
	}
	p.wait("the first reply", shownCommitted("echo: one"))
	fx.d.stop()
	startDaemon(t, fx.home)
	after, err := client.ReadDaemonFile(fx.home)
	if err != nil {
		t.Fatal(err)
	}
	if after.Token == before.Token || after.Port != before.Port {
		t.Fatalf("daemon.json before %+v, after %+v: want a new token on the same port", before, after)
	}
	req, _ := http.NewRequest("GET", "http://127.0.0.1:"+strconv.Itoa(after.Port)+"/v1/sessions", nil)
	req.Header.Set("Authorization", "Bearer "+before.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the old daemon.json token: %d", resp.StatusCode)
	}
	p.wait("connected again", `document.querySelector('#conn').textContent === 'connected'`)
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "two"); err != nil {
		t.Fatal(err)
	}
	p.wait("the reply after the restart", shownCommitted("echo: two"))
	wantMessages(t, fx, "s", p.messages())
}
