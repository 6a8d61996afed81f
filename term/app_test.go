package term

import (
	"context"
	"encoding/json"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"albedo/api"
	"albedo/client"
	"albedo/hub"
	"albedo/wire"
)

// daemonIn runs the real daemon stack in this process (SQLite file, hub,
// HTTP and websocket on 127.0.0.1) and publishes it in home/daemon.json, so
// a client.Client finds it as it would a daemon process.
func daemonIn(t *testing.T) *client.Client {
	t.Helper()
	home := t.TempDir()
	h, err := hub.Open(context.Background(), filepath.Join(home, "albedo.db"), hub.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(h, api.Options{Token: "tok", Boot: "b1"}, nil)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); hs.Close(); h.Close(context.Background()) })
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(hs.URL, "http://"))
	info := map[string]any{"pid": os.Getpid(), "port": atoi(port), "token": "tok", "boot": "b1", "version": wire.Version}
	b, _ := json.Marshal(info)
	if err := os.WriteFile(filepath.Join(home, client.DaemonFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(client.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

// A stale ETag is retried once with the fresh one; a refusal that remains
// is shown in the status bar, not swallowed.
func TestPatchRetriesStaleETagOnce(t *testing.T) {
	t.Parallel()
	c := daemonIn(t)
	ctx := context.Background()
	s, err := c.CreateSession(ctx, "s", wire.SessionCreate{Title: "old"})
	if err != nil {
		t.Fatal(err)
	}
	title := "changed elsewhere"
	if _, err := c.PatchSession(ctx, "s", s.ETag, wire.SessionPatch{Title: &title}); err != nil {
		t.Fatal(err)
	}
	scr := tcell.NewSimulationScreen("UTF-8")
	a := newApp(ctx, Options{Client: c}, scr)
	defer a.stop()
	model := "m2"
	res := a.patch(cmdPatch{Session: "s", ETag: s.ETag, Patch: wire.SessionPatch{Model: &model}}) // s.ETag is stale now
	if res.Err != nil || res.Session.Model != "m2" || res.Session.Title != title {
		t.Fatalf("patch with a stale etag: %+v", res)
	}
	a.m.Sessions = []*SessionView{newSessionView(s)}
	a.m.Focus = 0
	a.m.Result(res)
	if a.m.Sessions[0].Model != "m2" || a.m.NoticeErr {
		t.Fatalf("after the retried patch: %+v notice %q", a.m.Sessions[0], a.m.Notice)
	}
	// A refusal that is not about the etag is reported.
	if err := c.DeleteSession(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	res = a.patch(cmdPatch{Session: "s", ETag: res.Session.ETag, Patch: wire.SessionPatch{Model: &model}})
	a.m.Result(res)
	if res.Err == nil || !a.m.NoticeErr || !strings.Contains(a.m.Notice, "not changed") {
		t.Fatalf("refused patch: %v, notice %q", res.Err, a.m.Notice)
	}
}

// The whole App on a simulation screen: Ctrl-N, a prompt, the streamed
// echo, Esc-free quit with Ctrl-Q, and the screen released.
func TestAppRoundTrip(t *testing.T) {
	t.Parallel()
	c := daemonIn(t)
	scr := tcell.NewSimulationScreen("UTF-8")
	if err := scr.Init(); err != nil {
		t.Fatal(err)
	}
	drawn := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Options{Client: c, Screen: scr, OnDraw: func() {
			select {
			case <-drawn:
			default:
			}
			drawn <- strings.Join(rows(scr), "\n")
		}})
	}()
	waitFor := func(what string, there bool) string {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case s := <-drawn:
				if strings.Contains(s, what) == there {
					return s
				}
			case <-deadline:
				t.Fatalf("never drew %q (or its absence: %v)", what, !there)
			}
		}
	}
	wait := func(what string) string { t.Helper(); return waitFor(what, true) }
	wait("connected")
	scr.InjectKey(tcell.KeyCtrlN, 0, tcell.ModNone)
	wait("message · /help")
	for _, r := range "ping" {
		scr.InjectKey(tcell.KeyRune, r, tcell.ModNone)
	}
	scr.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
	wait("echo: ping")
	// What /new may name, from the daemon.
	for _, r := range "/providers" {
		scr.InjectKey(tcell.KeyRune, r, tcell.ModNone)
	}
	scr.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
	wait("/new NAME: echo default")
	// A session made elsewhere joins the sidebar, told by the daemon's
	// feed; one deleted leaves it.
	if _, err := c.CreateSession(context.Background(), "made-elsewhere", wire.SessionCreate{Title: "from the CLI"}); err != nil {
		t.Fatal(err)
	}
	wait("from the CLI")
	if err := c.DeleteSession(context.Background(), "made-elsewhere"); err != nil {
		t.Fatal(err)
	}
	waitFor("from the CLI", false)
	scr.InjectKey(tcell.KeyCtrlQ, 0, tcell.ModNone)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ctrl-Q did not quit")
	}
}
