//go:build !e2e_only || e2e_cluster

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/wire"
)

// A node of a cluster finds what another node committed, at once: the
// index is written by the commit, in the shared store.
func TestClusterSearchFindsAnotherNodesMessages(t *testing.T) {
	parallel(t)
	cl := startCluster(t, 2, 2*time.Second)
	ctx := ctxT(t)
	a, b := cl.nodes[0], cl.nodes[1]
	if _, err := a.c.CreateSession(ctx, "far", wire.SessionCreate{Title: "far"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.c.PutInput(ctx, "far", uuid.Must(uuid.NewV7()).String(), "a zeppelin over the bay"); err != nil {
		t.Fatal(err)
	}
	res, err := b.c.Search(ctx, "zeppelin", "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) == 0 || res.Results[len(res.Results)-1].Session != "far" || !strings.Contains(res.Results[len(res.Results)-1].Text, "«zeppelin»") {
		t.Fatalf("node B found %+v", res)
	}
}
