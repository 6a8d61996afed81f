package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"albedo/client"
	"albedo/wire"
)

// A daemon of a build before /v1/tokens answers the route with 404: the
// tokens command, which cannot open the SQLite file that daemon holds,
// says to stop it, rather than take the 404 for "no such token". And it
// asks the home's daemon whatever $ALBEDO_URL names.
func TestTokensBesideADaemonThatPredatesTheRoutes(t *testing.T) {
	home := t.TempDir()
	unlock, err := lockHome(home) // the daemon holds the home, as a running one does
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			w.Write([]byte(`{"ok":true,"boot":"old","version":"old"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":{"code":"not_found","message":"Not Found"}}`))
	}))
	defer srv.Close()
	b, _ := json.Marshal(wire.DaemonInfo{PID: os.Getpid(), URL: srv.URL, Token: "t", Boot: "old"})
	if err := os.WriteFile(filepath.Join(home, client.DaemonFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(client.EnvURL, "http://127.0.0.1:9") // not the home's daemon: not asked
	t.Setenv(client.EnvToken, "x")
	for _, args := range [][]string{{"tokens", "remove", "ops"}, {"tokens", "add", "--role", "owner", "ops"}, {"tokens", "list"}} {
		var out, errb strings.Builder
		root := newRoot(strings.NewReader(""), &out, &errb)
		root.SetArgs(append([]string{"--home", home}, args...))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := root.ExecuteContext(ctx)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "predates") || exitCode(err) == exitNotFound {
			t.Errorf("%v beside an older daemon: %v (exit %d), want it to say the daemon predates the routes", args, err, exitCode(err))
		}
	}
}
