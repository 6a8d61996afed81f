//go:build !e2e_only || e2e_cluster

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"albedo/wire"
)

// Two clusters (two databases) on one NATS server hear nothing of each
// other: each puts its own identity, made by its store's migrations, in
// every subject, so a notice of one (a session made, the bots a node
// serves) is published where the other does not listen.
func TestClustersOnOneNATSAreApart(t *testing.T) {
	parallel(t)
	ns := startNATS(t, -1)
	one := startClusterOn(t, clusterDatabase(t, 1), 1, 2*time.Second, "--nats", ns.ClientURL())
	two := startClusterOn(t, clusterDatabase(t, 1), 1, 2*time.Second, "--nats", ns.ClientURL())
	spy, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer spy.Close()
	subjects := make(chan string, 1024)
	if _, err := spy.Subscribe(">", func(m *nats.Msg) {
		select {
		case subjects <- m.Subject:
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := spy.Flush(); err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	spaceOf := func(c *cluster, id string) string {
		t.Helper()
		if _, err := c.nodes[0].c.CreateSession(ctx, id, wire.SessionCreate{}); err != nil {
			t.Fatal(err)
		}
		deadline := time.After(10 * time.Second)
		for {
			select {
			case s := <-subjects:
				parts := strings.Split(s, ".")
				if len(parts) == 3 && parts[0] == "albedo" && parts[2] == "changes" {
					return parts[1]
				}
			case <-deadline:
				t.Fatalf("no notice of the session %s made", id)
			}
		}
	}
	a, b := spaceOf(one, "on-one"), spaceOf(two, "on-two")
	if a == "" || b == "" || a == b {
		t.Fatalf("the clusters' subjects are albedo.%s.* and albedo.%s.*: not apart", a, b)
	}
	if again := spaceOf(one, "on-one-again"); again != a {
		t.Fatalf("one cluster published under albedo.%s and albedo.%s", a, again)
	}
}
