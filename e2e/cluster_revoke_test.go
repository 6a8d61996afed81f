//go:build !e2e_only || e2e_cluster

package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"albedo/client"
	"albedo/wire"
)

// revokeWithin is how soon every node of a cluster refuses what was
// revoked on one of them, or from an operator's shell.
const revokeWithin = 5 * time.Second

// statusWith is the HTTP status node answers GET path with token.
func statusWith(t *testing.T, nd *node, token, path string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, nd.c.Snapshot().BaseURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// endedWithin waits for w to close with code, at most d after since.
func endedWithin(t *testing.T, w *wsClient, code websocket.StatusCode, since time.Time, what string) {
	t.Helper()
	if _, got := w.end(); got != code {
		t.Fatalf("%s: closed with %d, want %d", what, got, code)
	}
	if took := time.Since(since); took > revokeWithin {
		t.Fatalf("%s: closed %v after the revocation, want at most %v", what, took, revokeWithin)
	}
}

// Two nodes and no NATS. An owner token that an operator removes from a
// shell of their own (`albedo tokens remove --db`, no daemon there) is
// refused by both nodes, and their websockets of it closed with 4401,
// within 5 s. A session deleted and made again on one node ends the other
// node's viewer of the old one, whose link cannot read the new session.
func TestClusterRevokesEverywhereWithoutNATS(t *testing.T) {
	parallel(t)
	cl := startCluster(t, 2, 5*time.Second)
	ctx := ctxT(t)
	for _, nd := range cl.nodes {
		if _, err := nd.c.Sessions(ctx); err != nil { // discovers its address
			t.Fatal(err)
		}
	}
	shell := t.TempDir() // the operator's: no daemon, no daemon.json
	var ops string
	for line := range strings.Lines(cli(t, shell, "tokens", "add", "--role", "owner", "ops", "--db", cl.url)) {
		if strings.HasPrefix(line, "alown_") {
			ops = strings.TrimSpace(line)
		}
	}
	var socks []*wsClient
	for _, nd := range cl.nodes {
		w := dialWS(t, client.Snapshot{BaseURL: nd.c.Snapshot().BaseURL, Token: ops})
		w.send(wire.Command{ID: 1, Op: wire.OpHello})
		if f := w.next(func(f wire.Frame) bool { return f.IsReply() }); !f.Reply.OK {
			t.Fatalf("%s refused the new owner token: %+v", nd.name, f.Reply.Error)
		}
		socks = append(socks, w)
	}
	cli(t, shell, "tokens", "remove", "ops", "--db", cl.url)
	removed := time.Now()
	for i, nd := range cl.nodes {
		endedWithin(t, socks[i], 4401, removed, nd.name+"'s websocket of the removed token")
		if code := statusWith(t, nd, ops, "/v1/sessions"); code != http.StatusUnauthorized {
			t.Fatalf("%s answers the removed token with %d", nd.name, code)
		}
	}

	a, b := cl.nodes[0], cl.nodes[1]
	if _, err := a.c.CreateSession(ctx, "private", wire.SessionCreate{}); err != nil {
		t.Fatal(err)
	}
	link, err := a.c.ShareLink(ctx, "private", wire.LinkCreate{})
	if err != nil {
		t.Fatal(err)
	}
	viewer := dialWS(t, client.Snapshot{BaseURL: b.c.Snapshot().BaseURL, Token: link.Token})
	viewer.send(wire.Command{ID: 1, Op: wire.OpHello, Subs: []wire.Sub{{Session: "private"}}})
	if f := viewer.next(func(f wire.Frame) bool { return f.IsReply() }); !f.Reply.OK {
		t.Fatalf("node b refused the link: %+v", f.Reply.Error)
	}
	if err := a.c.DeleteSession(ctx, "private"); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	if _, err := a.c.CreateSession(ctx, "private", wire.SessionCreate{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.c.PutInput(ctx, "private", uuid.NewString(), "not for the old link's eyes"); err != nil {
		t.Fatal(err)
	}
	frames, code := viewer.end()
	for _, f := range frames {
		if f.Op == wire.PushEvent {
			t.Fatalf("the old link read the new session: %+v", f.Event)
		}
	}
	if code != 4401 || time.Since(deleted) > revokeWithin {
		t.Fatalf("node b closed the old session's viewer with %d, %v after the delete", code, time.Since(deleted))
	}
	if code := statusWith(t, b, link.Token, "/v1/sessions/private/events"); code != http.StatusUnauthorized {
		t.Fatalf("node b answers the old session's link with %d", code)
	}
}
