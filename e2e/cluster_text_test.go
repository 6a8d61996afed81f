//go:build !e2e_only || e2e_cluster

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// A viewer on another node that comes while a reply pauses (the model
// thinks) is shown the reply so far within a few seconds: the running
// node sends the whole text every second while it grows, not only with
// the next delta, which a pause holds back. The same heals a lost delta.
func TestClusterLateViewerSeesAPausedReply(t *testing.T) {
	parallel(t)
	cl, _ := startNATSCluster(t, 2)
	ctx := ctxT(t)
	a, b := cl.nodes[0], cl.nodes[1]
	s, err := a.c.CreateSession(ctx, "pausing", wire.SessionCreate{Provider: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release)
	cl.fake.Push(fakeopenai.Reply{Chunks: []string{"so ", "far"}, Block: release})
	onA := a.c.Stream(client.StreamOptions{})
	defer onA.Close()
	subA := onA.Subscribe(s.ID, client.Cursor{Epoch: s.Epoch})
	if _, err := a.c.PutInput(ctx, s.ID, uuid.NewString(), "think"); err != nil {
		t.Fatal(err)
	}
	var text string
	for text != "so far" {
		it, err := subA.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		switch it.Op {
		case wire.PushPartial:
			text = it.Text.Text
		case wire.PushDelta:
			text += it.Text.Text
		}
	}
	// The reply pauses now; only then does b's viewer come.
	onB := b.c.Stream(client.StreamOptions{})
	defer onB.Close()
	subB := onB.Subscribe(s.ID, client.Cursor{Epoch: s.Epoch})
	came := time.Now()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for text = ""; text != "so far"; {
		it, err := subB.Next(wctx)
		if err != nil {
			t.Fatalf("b's viewer was shown %q of the paused reply in 5 s: %v", text, err)
		}
		switch it.Op {
		case wire.PushPartial:
			text = it.Text.Text
		case wire.PushDelta:
			text += it.Text.Text
		}
	}
	t.Logf("b's late viewer was shown the paused reply after %v", time.Since(came).Round(time.Millisecond))
}
