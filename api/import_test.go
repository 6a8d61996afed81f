package api

import (
	"net/http"
	"strings"
	"testing"

	"albedo/wire"
)

// POST /v1/sessions/{id}/import takes the next events of a session as
// they were, skips those it holds (a chunk sent again), runs nothing, and
// refuses what an export cannot hold, or what does not follow the head;
// only admins may.
func TestImportEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	const at = `"at":"2026-01-02T03:04:05Z"`
	first := `{"events":[{"offset":1,"type":"message","role":"user","author":"ann","input_id":"i1","turn_id":"t1","text":"hello",` + at + `},
		{"offset":2,"type":"turn","turn_id":"t1","state":"started",` + at + `}]}`
	var out wire.SessionImported
	if code, _ := e.do("POST", "/v1/sessions/s/import", nil, first, &out); code != 200 || out.Head != 2 {
		t.Fatalf("first chunk: %d %+v", code, out)
	}
	again := `{"events":[{"offset":2,"type":"turn","turn_id":"t1","state":"started",` + at + `},
		{"offset":3,"type":"message","role":"assistant","author":"m","turn_id":"t1","text":"hi",` + at + `}]}`
	if code, _ := e.do("POST", "/v1/sessions/s/import", nil, again, &out); code != 200 || out.Head != 3 {
		t.Fatalf("an overlapping chunk: %d %+v", code, out)
	}
	h := e.history("s")
	if len(h) != 3 || !strings.Contains(string(h[0]), `"at":"2026-01-02T03:04:05Z"`) || !strings.Contains(string(h[0]), `"author":"ann"`) {
		t.Fatalf("history %s", h)
	}
	var st wire.StatusPush
	if e.do("GET", "/v1/sessions/s/status", nil, "", &st); st.Queued != 0 {
		t.Fatalf("an imported input was queued: %+v", st)
	}
	for name, body := range map[string]string{
		"a gap":         `{"events":[{"offset":9,"type":"message","role":"user","text":"x",` + at + `}]}`,
		"out of order":  `{"events":[{"offset":4,"type":"turn",` + at + `},{"offset":6,"type":"turn",` + at + `}]}`,
		"no time":       `{"events":[{"offset":4,"type":"turn"}]}`,
		"an odd type":   `{"events":[{"offset":4,"type":"secret",` + at + `}]}`,
		"no role":       `{"events":[{"offset":4,"type":"message","text":"x",` + at + `}]}`,
		"none":          `{"events":[]}`,
		"a NUL in text": `{"events":[{"offset":4,"type":"message","role":"user","text":"a\u0000b",` + at + `}]}`,
		"not JSON":      `{"events":`,
	} {
		var er wire.ErrorBody
		if code, _ := e.do("POST", "/v1/sessions/s/import", nil, body, &er); code != http.StatusBadRequest || er.Error.Code != wire.CodeBadRequest {
			t.Errorf("%s: %d %+v", name, code, er)
		}
	}
	ann := e.member("ann", false)
	if code, _ := e.do("POST", "/v1/sessions/s/import", e.as(ann.Token), first, nil); code != http.StatusForbidden {
		t.Fatalf("a member imported: %d", code)
	}
}
