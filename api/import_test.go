package api

import (
	"encoding/json"
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
	const in1, t1 = `"0190a8a0-0000-7000-8000-000000000001"`, `"0190a8a0-0000-7000-8000-0000000000f1"`
	first := `{"events":[{"offset":1,"type":"message","role":"user","author":"ann","input_id":` + in1 + `,"turn_id":` + t1 + `,"text":"hello",` + at + `},
		{"offset":2,"type":"turn","turn_id":` + t1 + `,"state":"started",` + at + `}]}`
	var out wire.SessionImported
	if code, _ := e.do("POST", "/v1/sessions/s/import", nil, first, &out); code != 200 || out.Head != 2 {
		t.Fatalf("first chunk: %d %+v", code, out)
	}
	again := `{"events":[{"offset":2,"type":"turn","turn_id":` + t1 + `,"state":"started",` + at + `},
		{"offset":3,"type":"message","role":"assistant","author":"m","turn_id":` + t1 + `,"text":"hi",` + at + `}]}`
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
		"a gap":                 `{"events":[{"offset":9,"type":"message","role":"user","text":"x",` + at + `}]}`,
		"out of order":          `{"events":[{"offset":4,"type":"turn","turn_id":` + t1 + `,"state":"completed",` + at + `},{"offset":6,"type":"turn","turn_id":` + t1 + `,"state":"completed",` + at + `}]}`,
		"a bogus state":         `{"events":[{"offset":4,"type":"turn","turn_id":` + t1 + `,"state":"bogus",` + at + `}]}`,
		"a turn with no id":     `{"events":[{"offset":4,"type":"turn","state":"completed",` + at + `}]}`,
		"a message's odd state": `{"events":[{"offset":4,"type":"message","role":"user","text":"x","state":"queued",` + at + `}]}`,
		"an id not a UUID":      `{"events":[{"offset":4,"type":"message","role":"user","text":"x","input_id":"i1",` + at + `}]}`,
		"an upper-case UUID":    `{"events":[{"offset":4,"type":"turn","turn_id":"0190A8A0-0000-7000-8000-0000000000F1","state":"completed",` + at + `}]}`,
		"the year 9999":         `{"events":[{"offset":4,"type":"message","role":"user","text":"x","at":"9999-01-01T00:00:00Z"}]}`,
		"the year 1970":         `{"events":[{"offset":4,"type":"message","role":"user","text":"x","at":"1970-01-01T00:00:01Z"}]}`,
		"no time":               `{"events":[{"offset":4,"type":"turn"}]}`,
		"an odd type":           `{"events":[{"offset":4,"type":"secret",` + at + `}]}`,
		"no role":               `{"events":[{"offset":4,"type":"message","text":"x",` + at + `}]}`,
		"none":                  `{"events":[]}`,
		"a NUL in text":         `{"events":[{"offset":4,"type":"message","role":"user","text":"a\u0000b",` + at + `}]}`,
		"not JSON":              `{"events":`,
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

// An export's last chunk (done) closes the turn the export left started,
// as interrupted for the import, and the restored user inputs count: the
// next live input's order follows them, and its turn runs.
func TestImportDoneClosesTheOpenTurnAndCountsTheInputs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	const at = `"at":"2026-01-02T03:04:05Z"`
	const in1, in2 = `"0190a8a0-0000-7000-8000-000000000001"`, `"0190a8a0-0000-7000-8000-000000000002"`
	const t1, t2 = `"0190a8a0-0000-7000-8000-0000000000f1"`, `"0190a8a0-0000-7000-8000-0000000000f2"`
	first := `{"events":[{"offset":1,"type":"message","role":"user","author":"ann","input_id":` + in1 + `,"turn_id":` + t1 + `,"text":"hello",` + at + `},
		{"offset":2,"type":"turn","turn_id":` + t1 + `,"state":"started",` + at + `},
		{"offset":3,"type":"turn","turn_id":` + t1 + `,"state":"completed",` + at + `},
		{"offset":4,"type":"message","role":"user","author":"ann","input_id":` + in2 + `,"turn_id":` + t2 + `,"text":"again",` + at + `},
		{"offset":5,"type":"turn","turn_id":` + t2 + `,"state":"started",` + at + `}]}`
	var out wire.SessionImported
	if code, _ := e.do("POST", "/v1/sessions/s/import", nil, first, &out); code != 200 || out.Head != 5 {
		t.Fatalf("first chunk: %d %+v", code, out)
	}
	last := `{"done":true,"events":[{"offset":6,"type":"message","role":"assistant","author":"m","turn_id":` + t2 + `,"text":"partial",` + at + `}]}`
	if code, _ := e.do("POST", "/v1/sessions/s/import", nil, last, &out); code != 200 || out.Head != 7 {
		t.Fatalf("the last chunk: %d %+v, want the head past the closing turn event", code, out)
	}
	var ev wire.Event
	if err := json.Unmarshal(e.history("s")[6], &ev); err != nil || ev.Type != wire.EventTurn || ev.TurnID != strings.Trim(t2, `"`) ||
		ev.State != wire.TurnInterrupted || ev.Reason != wire.ReasonImport {
		t.Fatalf("the event after the import: %+v %v, want the open turn interrupted for the import", ev, err)
	}
	if code, _ := e.do("POST", "/v1/sessions/s/import", nil, last, &out); code != 200 || out.Head != 7 {
		t.Fatalf("the last chunk again: %d %+v, want nothing more", code, out)
	}
	var r wire.Receipt
	if code, _ := e.do("PUT", "/v1/sessions/s/inputs/0190a8a0-0000-7000-8000-000000000003", nil, `{"text":"live"}`, &r); code != http.StatusAccepted || r.Order != 3 {
		t.Fatalf("a live input after two restored: %d order %d, want 3", code, r.Order)
	}
	e.settle("s", 1)
}
