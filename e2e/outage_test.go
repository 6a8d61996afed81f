//go:build !e2e_only || e2e_cluster

package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/db/pgtest"
	"albedo/wire"
)

// While PostgreSQL is down, a write is refused as unavailable (503 with
// Retry-After, nothing written), not as an internal error, and the Go
// client sends it again until the store is back, over HTTP and over its
// websocket stream: each input then has its receipt, once. Before, such writes were 500 internal, which no client
// retried.
func TestAStoreOutageIsUnavailableAndClientsRetry(t *testing.T) {
	parallelHeavy(t)
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	cl := startClusterOn(t, srv.Database(t), 1, 2*time.Second)
	c := cl.nodes[0].c
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := c.CreateSession(ctx, "down", wire.SessionCreate{Provider: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Halt(); err != nil {
		t.Fatal(err)
	}
	halted := true
	defer func() {
		if halted {
			srv.Resume()
		}
	}()

	snap := c.Snapshot()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, snap.BaseURL+"/v1/sessions/"+s.ID+"/inputs/"+uuid.Must(uuid.NewV7()).String(), strings.NewReader(`{"text":"refused"}`))
	req.Header.Set("Authorization", "Bearer "+snap.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body wire.ErrorBody
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || body.Error == nil || body.Error.Code != wire.CodeUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("an input while the store is down: %s %+v (Retry-After %q), want 503 unavailable with Retry-After", resp.Status, body.Error, resp.Header.Get("Retry-After"))
	}

	// One input over HTTP, one over the client's websocket stream.
	st := c.Stream(client.StreamOptions{})
	defer st.Close()
	got := make(chan error, 2)
	go func() {
		_, err := c.PutInput(ctx, s.ID, uuid.Must(uuid.NewV7()).String(), "sent over HTTP while the store is down")
		got <- err
	}()
	go func() {
		_, err := st.Send(ctx, s.ID, uuid.Must(uuid.NewV7()).String(), "sent over the stream while the store is down")
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("an input returned while the store was down: %v", err)
	case <-time.After(2 * time.Second): // the client is still trying
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	halted = false
	for range 2 {
		if err := <-got; err != nil {
			t.Fatalf("an input once the store is back: %v", err)
		}
	}
	evs := waitTurnsClosed(t, ctx, c, s.ID, 2)
	inputs, _ := turnsOf(t, evs)
	slices.Sort(inputs)
	if want := []string{"sent over HTTP while the store is down", "sent over the stream while the store is down"}; !slices.Equal(inputs, want) {
		t.Fatalf("inputs in the log: %q, want each retried one once", inputs)
	}
}
