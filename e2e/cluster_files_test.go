//go:build !e2e_only || e2e_cluster

package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/wire"
)

// A file uploaded through one node of a cluster is read through another:
// its chunks are in the shared PostgreSQL, and so is the message that
// carries it.
func TestClusterFileUploadedOnOneNodeIsReadOnAnother(t *testing.T) {
	parallel(t)
	cl, _ := startNATSCluster(t, 2)
	ctx := ctxT(t)
	a, b := cl.nodes[0], cl.nodes[1]
	s, err := a.c.CreateSession(ctx, "files", wire.SessionCreate{Title: "files"})
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("a line of the log\n"), 40_000) // 720 KB: three chunks
	path := filepath.Join(t.TempDir(), "build.log")
	os.WriteFile(path, data, 0o600)
	att, err := a.c.PutFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.c.PutInput(ctx, s.ID, uuid.NewString(), "see the log", att); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if _, err := b.c.GetBlob(ctx, att.SHA256, &got); err != nil || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("read on the other node: %v, %d bytes of %d", err, got.Len(), len(data))
	}
	evs := events(t, ctx, b.c, s.ID)
	if len(evs) == 0 || len(evs[0].Attachments) != 1 || evs[0].Attachments[0].Name != "build.log" {
		t.Fatalf("the message on the other node: %+v", evs)
	}
}

// A bot served on one node replies, with a file it uploaded there, to a
// turn that runs on another: the reply's files cross the bus with it, and
// the committed message carries them.
func TestClusterBotsReplyCarriesAFileAcrossNodes(t *testing.T) {
	parallel(t)
	cl, _ := startNATSCluster(t, 2)
	ctx := ctxT(t)
	a, b := cl.nodes[0], cl.nodes[1]
	bot, err := a.c.AddBot(ctx, "plotter", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.c.CreateSession(ctx, "plots", wire.SessionCreate{Provider: "bot:plotter"}); err != nil {
		t.Fatal(err)
	}
	chart := bytes.Repeat([]byte("x,y\n1,2\n"), 1000)
	sum := sha256.Sum256(chart)
	hash := hex.EncodeToString(sum[:])
	base := b.c.Snapshot().BaseURL
	if base == "" {
		if _, err := b.c.Sessions(ctx); err != nil { // discovers b's address
			t.Fatal(err)
		}
		base = b.c.Snapshot().BaseURL
	}
	req, _ := http.NewRequestWithContext(ctx, "PUT", base+"/v1/blobs/"+hash, bytes.NewReader(chart))
	req.Header.Set("Authorization", "Bearer "+bot.Token)
	req.Header.Set("Content-Type", "text/csv")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("the bot's upload on node b: %v %v", err, resp)
	}
	resp.Body.Close()

	w := dialWS(t, client.Snapshot{BaseURL: base, Token: bot.Token})
	w.send(wire.Command{ID: 1, Op: wire.OpHello})
	w.next(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == 1 })
	w.send(wire.Command{ID: 2, Op: wire.OpServe})
	w.next(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == 2 })
	if _, err := a.c.PutInput(ctx, "plots", uuid.NewString(), "plot it"); err != nil { // node a runs the turn
		t.Fatal(err)
	}
	turn := w.next(func(f wire.Frame) bool { return f.Op == wire.PushTurn }).Turn
	w.send(wire.Command{ID: 3, Op: wire.OpReply, TurnID: turn.TurnID, Text: "the data", Done: true,
		Attachments: []wire.Attachment{{SHA256: hash, Name: "data.csv"}}})
	if f := w.next(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == 3 }); !f.Reply.OK {
		t.Fatalf("reply refused: %+v", f.Reply.Error)
	}
	var msg wire.Event
	for _, e := range events(t, ctx, a.c, "plots") {
		if e.Type == wire.EventMessage && e.TurnID == turn.TurnID {
			msg = e
		}
	}
	if msg.Text != "the data" || len(msg.Attachments) != 1 || msg.Attachments[0] != (wire.Attachment{SHA256: hash, Name: "data.csv", MIME: "text/csv", Size: int64(len(chart))}) {
		t.Fatalf("the reply on node a: %+v", msg)
	}
	var got bytes.Buffer
	if _, err := a.c.GetBlob(ctx, hash, &got); err != nil || !bytes.Equal(got.Bytes(), chart) {
		t.Fatalf("the owner reads it on node a: %v", err)
	}
}
