//go:build !e2e_only || e2e_cluster

package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

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
