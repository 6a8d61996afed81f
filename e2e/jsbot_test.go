//go:build !e2e_only || e2e_core

package e2e

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"albedo/wire"
)

// nodeWithWebSocket is the command that runs a script with Node's
// built-in WebSocket: node, with --experimental-websocket on Node 20.
func nodeWithWebSocket(t *testing.T) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("Node.js is required for this test (the machine's node, 20 or later)")
	}
	if out, _ := exec.Command(node, "-e", "process.stdout.write(typeof WebSocket)").Output(); string(out) == "function" {
		return []string{node}
	}
	return []string{node, "--experimental-websocket"}
}

// The JavaScript bot of docs/bots.md (examples/bot.mjs), on Node's own
// WebSocket, comes through a balancer that answers its first upgrades
// with 503 — on which Node fires error and never close — and serves a
// turn once the balancer lets it through.
func TestJavaScriptBotRidesOutRefusedUpgrades(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{})
	tok, err := fx.c.AddBot(fx.ctx, "jsbot", nil)
	if err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse(fx.c.Snapshot().BaseURL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var refused atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refused.Load() < 3 {
			refused.Add(1)
			http.Error(w, "no server is available", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	script, err := filepath.Abs("../examples/bot.mjs")
	if err != nil {
		t.Fatal(err)
	}
	argv := append(nodeWithWebSocket(t), script)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "ALBEDO_WS="+strings.Replace(front.URL, "http://", "ws://", 1)+"/v1/ws", "ALBEDO_BOT_TOKEN="+tok.Token)
	out := &logLines{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	s, err := fx.c.CreateSession(fx.ctx, "js", wire.SessionCreate{Provider: "bot:jsbot"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fx.c.PutInput(fx.ctx, s.ID, uuid.NewString(), "twelve chars"); err != nil {
		t.Fatal(err)
	}
	evs := waitTurnsClosed(t, fx.ctx, fx.c, s.ID, 1)
	last := evs[len(evs)-2]
	if last.Type != wire.EventMessage || last.Text != "Your message has 12 characters." || last.Author != "jsbot" {
		t.Fatalf("the turn ended with %+v\nbot:\n%s", last, out)
	}
	if refused.Load() < 3 || !strings.Contains(out.String(), "connection failed") {
		t.Fatalf("the bot met %d refusals:\n%s", refused.Load(), out)
	}
}
