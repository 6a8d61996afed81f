//go:build !e2e_only || e2e_web

package e2e

import (
	"context"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"albedo/client"
	"albedo/wire"
)

// impostor takes a stopped daemon's port and records whatever comes to
// it: every request's Authorization, every websocket message. It answers
// a prove with a proof it cannot have made.
type impostor struct {
	mu    sync.Mutex
	heard []string
	prove chan struct{} // a prove came
	srv   *http.Server
}

func (im *impostor) record(s string) {
	im.mu.Lock()
	im.heard = append(im.heard, s)
	im.mu.Unlock()
}

func (im *impostor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	im.record(r.Method + " " + r.URL.String() + " " + r.Header.Get("Authorization"))
	if r.URL.Path != "/v1/ws" {
		http.Error(w, "impostor", http.StatusServiceUnavailable)
		return
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{wire.Subprotocol}, InsecureSkipVerify: true})
	if err != nil {
		return
	}
	defer c.CloseNow()
	for {
		_, msg, err := c.Read(r.Context())
		if err != nil {
			return
		}
		im.record(string(msg))
		if strings.Contains(string(msg), `"op":"prove"`) {
			id := regexp.MustCompile(`"id":(\d+)`).FindStringSubmatch(string(msg))
			_ = c.Write(r.Context(), websocket.MessageText, []byte(`{"id":`+id[1]+`,"ok":true,"proof":"`+strings.Repeat("0", 64)+`"}`))
			select {
			case im.prove <- struct{}{}:
			default:
			}
		}
	}
}

// A process that takes the daemon's port while it is down learns nothing
// the next daemon accepts: the page asks it to prove itself with the
// link's key, it cannot, and the page never sends it its token; whatever
// it heard is refused by the daemon that comes back, and the page returns
// to that one.
func TestImpostorOnThePortLearnsNothing(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "guarded"}})
	info, err := client.ReadDaemonFile(fx.home)
	if err != nil {
		t.Fatal(err)
	}
	link := ownerLink(t, fx.home, "s")
	pageToken := regexp.MustCompile(`token=([^&]+)`).FindStringSubmatch(link)[1]
	p := startBrowser(t).open(link)
	p.waitOpen("guarded")
	fx.d.stop()

	im := &impostor{prove: make(chan struct{}, 1)}
	var ln net.Listener
	for deadline := time.Now().Add(10 * time.Second); ; {
		if ln, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(info.Port)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon's port stayed taken: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	im.srv = &http.Server{Handler: im}
	go im.srv.Serve(ln)
	for range 2 { // the page asks, is refused, and asks again later
		select {
		case <-im.prove:
		case <-time.After(30 * time.Second):
			t.Fatal("the page never asked the impostor to prove itself")
		}
	}
	p.wait("the page says what answers is not the daemon", `document.querySelector('#conn').textContent.startsWith('reconnecting in')`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	im.srv.Shutdown(ctx)
	im.srv.Close()

	startDaemon(t, fx.home)
	p.wait("back on the daemon", `document.querySelector('#conn').textContent === 'connected'`)
	im.mu.Lock()
	heard := strings.Join(im.heard, "\n")
	im.mu.Unlock()
	if strings.Contains(heard, `"op":"hello"`) || strings.Contains(heard, pageToken) || strings.Contains(heard, info.Token) {
		t.Fatalf("the impostor heard a hello or a token:\n%s", heard)
	}
	after, err := client.ReadDaemonFile(fx.home)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range regexp.MustCompile(`[A-Za-z0-9_.-]{20,}`).FindAllString(heard, -1) {
		req, _ := http.NewRequest("GET", "http://127.0.0.1:"+strconv.Itoa(after.Port)+"/v1/sessions", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("the daemon accepted %q, which the impostor heard: %d", tok, resp.StatusCode)
		}
	}
}
