package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"albedo/api"
	"albedo/hub"
)

// inProcess serves a daemon's API from this process, with the owner token
// "owner-token", over a hub on a fresh SQLite file, and returns the hub
// and the daemon's URL. wrap, if not nil, stands in front of the API.
func inProcess(t *testing.T, wrap func(http.Handler) http.Handler) (*hub.Hub, string) {
	t.Helper()
	emptyPlace(t)
	h, err := hub.Open(context.Background(), filepath.Join(t.TempDir(), "albedo.db"), hub.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(h, api.Options{Token: "owner-token", Boot: "b1"}, nil)
	var handler http.Handler = srv.Handler()
	if wrap != nil {
		handler = wrap(handler)
	}
	hs := httptest.NewServer(handler)
	t.Cleanup(func() { srv.Close(); hs.Close(); h.Close(context.Background()) })
	return h, hs.URL
}
