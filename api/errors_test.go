package api

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"albedo/hub"
	"albedo/wire"
)

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// An internal error tells the client a reference, not a file it may not
// have (a server logs to stderr), and the log line under that reference
// names the route and the session.
func TestInternalErrorsNameWhereToLook(t *testing.T) {
	t.Parallel()
	h, err := hub.Open(context.Background(), filepath.Join(t.TempDir(), "albedo.db"), hub.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var logged syncBuffer
	srv := New(h, Options{Token: testToken, Boot: "b"}, slog.New(slog.NewTextHandler(&logged, nil)))
	hs := httptest.NewServer(srv.Handler())
	defer func() { srv.Close(); hs.Close() }()
	e := &env{t: t, url: hs.URL, hub: h, srv: srv}
	e.create("s")
	if err := h.Close(context.Background()); err != nil { // the store goes away under the server
		t.Fatal(err)
	}
	var body wire.ErrorBody
	code, _ := e.do(http.MethodGet, "/v1/sessions/s/events", nil, "", &body)
	if code != http.StatusInternalServerError || body.Error == nil || body.Error.Code != wire.CodeInternal {
		t.Fatalf("%d %+v, want 500 internal", code, body.Error)
	}
	m := regexp.MustCompile(`ref=([0-9a-f]{8})`).FindStringSubmatch(body.Error.Message)
	if m == nil || strings.Contains(body.Error.Message, "daemon.log") {
		t.Fatalf("message %q names no reference, or a file", body.Error.Message)
	}
	var line string
	for l := range strings.Lines(logged.String()) {
		if strings.Contains(l, "ref="+m[1]) {
			line = l
		}
	}
	if !strings.Contains(line, `route="GET /v1/sessions/:id/events"`) || !strings.Contains(line, "session=s") {
		t.Fatalf("the log's line of ref %s is %q, want the route and the session", m[1], line)
	}
}
