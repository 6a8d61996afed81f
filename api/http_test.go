package api

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"albedo/wire"
)

const uuid1 = "0190a8a0-0000-7000-8000-000000000001"

func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	var created wire.Session
	if code, _ := e.do("POST", "/v1/sessions", nil, `{"title":"a","model":"m"}`, &created); code != http.StatusCreated {
		t.Fatalf("POST: %d", code)
	}
	if created.ID == "" || created.Epoch == "" || created.Phase != wire.PhaseIdle || created.Model != "m" {
		t.Fatalf("created %+v", created)
	}
	var got wire.Session
	code, h := e.do("GET", "/v1/sessions/"+created.ID, nil, "", &got)
	if code != 200 || h.Get("ETag") != created.ETag || got.ID != created.ID {
		t.Fatalf("GET: %d etag %q %+v", code, h.Get("ETag"), got)
	}
	var patched wire.Session
	code, h = e.do("PATCH", "/v1/sessions/"+created.ID, map[string]string{"If-Match": got.ETag}, `{"effort":"high"}`, &patched)
	if code != 200 || patched.Effort != "high" || patched.ETag == got.ETag || h.Get("ETag") != patched.ETag {
		t.Fatalf("PATCH: %d %+v", code, patched)
	}
	var list wire.SessionList
	if code, _ := e.do("GET", "/v1/sessions", nil, "", &list); code != 200 || len(list.Sessions) != 1 {
		t.Fatalf("list: %d %+v", code, list)
	}
	evs := e.history(created.ID)
	if len(evs) != 1 || !strings.Contains(string(evs[0]), `"type":"settings"`) {
		t.Fatalf("history after patch: %s", evs)
	}
	if code, _ := e.do("DELETE", "/v1/sessions/"+created.ID, nil, "", nil); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d", code)
	}
	if code, _ := e.do("GET", "/v1/sessions/"+created.ID, nil, "", nil); code != http.StatusNotFound {
		t.Fatalf("GET after delete: %d", code)
	}
}

func TestInputsIdempotent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	var r1, r2, r3 wire.Receipt
	if code, _ := e.do("PUT", "/v1/sessions/s/inputs/"+uuid1, nil, `{"text":"hi"}`, &r1); code != http.StatusAccepted {
		t.Fatalf("first PUT: %d", code)
	}
	if code, _ := e.do("PUT", "/v1/sessions/s/inputs/"+uuid1, nil, `{"text":"hi"}`, &r2); code != http.StatusAccepted {
		t.Fatalf("repeat PUT: %d", code)
	}
	if code, _ := e.do("GET", "/v1/sessions/s/inputs/"+uuid1, nil, "", &r3); code != 200 {
		t.Fatalf("GET receipt: %d", code)
	}
	// The same receipt each time; only its delivery may have moved on.
	r2.Delivery, r3.Delivery = r1.Delivery, r1.Delivery
	if r1.State != wire.ReceiptAccepted || r1.Order != 1 || r1.TurnID == "" || r1 != r2 || r1 != r3 {
		t.Fatalf("receipts differ: %+v %+v %+v", r1, r2, r3)
	}
	// One user message, one turn: started, the reply, completed.
	evs := e.settle("s", 1)
	types := ""
	for _, ev := range evs {
		types += string(ev.Type) + "/" + string(ev.Role) + ev.State + " "
	}
	if want := "message/usercomplete turn/started message/assistantcomplete turn/completed "; types != want {
		t.Fatalf("log %q, want %q", types, want)
	}
	if evs[2].Text != "echo: hi" || evs[2].TurnID != r1.TurnID {
		t.Fatalf("reply %+v", evs[2])
	}
	var done wire.Receipt
	e.do("GET", "/v1/sessions/s/inputs/"+uuid1, nil, "", &done)
	if done.Delivery != wire.DeliveryDone {
		t.Fatalf("delivery after the turn: %q", done.Delivery)
	}
}

// Every refusal has its code, and none changes what is stored.
func TestHTTPBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	var r wire.Receipt
	e.do("PUT", "/v1/sessions/s/inputs/"+uuid1, nil, `{"text":"keep me"}`, &r)
	e.settle("s", 1)
	var s wire.Session
	e.do("GET", "/v1/sessions/s", nil, "", &s)
	before := e.history("s")
	big := `{"text":"` + strings.Repeat("x", wire.MaxInputBytes+1) + `"}`

	cases := []struct {
		name, method, path string
		hdr                map[string]string
		body               string
		status             int
		code               wire.Code
	}{
		{"no token", "GET", "/v1/sessions", map[string]string{"Authorization": ""}, "", 401, wire.CodeUnauthorized},
		{"wrong token", "GET", "/v1/sessions", map[string]string{"Authorization": "Bearer nope"}, "", 401, wire.CodeUnauthorized},
		{"unknown route", "GET", "/v1/nothing", nil, "", 404, wire.CodeNotFound},
		{"missing session", "GET", "/v1/sessions/ghost", nil, "", 404, wire.CodeNotFound},
		{"history of missing session", "GET", "/v1/sessions/ghost/events", nil, "", 404, wire.CodeNotFound},
		{"bad after", "GET", "/v1/sessions/s/events?after=x", nil, "", 400, wire.CodeBadRequest},
		{"after and before", "GET", "/v1/sessions/s/events?after=1&before=3", nil, "", 400, wire.CodeBadRequest},
		{"put without If-None-Match", "PUT", "/v1/sessions/s2", nil, `{}`, 428, wire.CodeEtagRequired},
		{"put same id other body", "PUT", "/v1/sessions/s", map[string]string{"If-None-Match": "*"}, `{"title":"other"}`, 409, wire.CodeConflict},
		{"put bad id", "PUT", "/v1/sessions/-bad", map[string]string{"If-None-Match": "*"}, `{}`, 400, wire.CodeBadRequest},
		{"malformed json", "POST", "/v1/sessions", nil, `{"title":`, 400, wire.CodeBadRequest},
		{"wrong type", "POST", "/v1/sessions", nil, `{"title":5}`, 400, wire.CodeBadRequest},
		{"patch without If-Match", "PATCH", "/v1/sessions/s", nil, `{"title":"x"}`, 428, wire.CodeEtagRequired},
		{"patch stale etag", "PATCH", "/v1/sessions/s", map[string]string{"If-Match": `"999"`}, `{"title":"x"}`, 412, wire.CodeEtagMismatch},
		{"patch garbage etag", "PATCH", "/v1/sessions/s", map[string]string{"If-Match": `zzz`}, `{"title":"x"}`, 412, wire.CodeEtagMismatch},
		{"patch weak etag", "PATCH", "/v1/sessions/s", map[string]string{"If-Match": `W/"1"`}, `{"title":"x"}`, 412, wire.CodeEtagMismatch}, // If-Match compares strongly
		{"patch missing session", "PATCH", "/v1/sessions/ghost", map[string]string{"If-Match": `"1"`}, `{"title":"x"}`, 404, wire.CodeNotFound},
		{"input id not uuid", "PUT", "/v1/sessions/s/inputs/nope", nil, `{"text":"x"}`, 400, wire.CodeBadRequest},
		{"input empty text", "PUT", "/v1/sessions/s/inputs/" + uuid1[:35] + "2", nil, `{"text":""}`, 400, wire.CodeBadRequest},
		{"input too large", "PUT", "/v1/sessions/s/inputs/" + uuid1[:35] + "3", nil, big, 413, wire.CodeTooLarge},
		{"input other text same id", "PUT", "/v1/sessions/s/inputs/" + uuid1, nil, `{"text":"changed"}`, 409, wire.CodeConflict},
		{"input missing session", "PUT", "/v1/sessions/ghost/inputs/" + uuid1, nil, `{"text":"x"}`, 404, wire.CodeNotFound},
		{"receipt missing", "GET", "/v1/sessions/s/inputs/" + uuid1[:35] + "9", nil, "", 404, wire.CodeNotFound},
		{"status missing session", "GET", "/v1/sessions/ghost/status", nil, "", 404, wire.CodeNotFound},
		{"delete missing session", "DELETE", "/v1/sessions/ghost", nil, "", 404, wire.CodeNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body wire.ErrorBody
			code, _ := e.do(tc.method, tc.path, tc.hdr, tc.body, &body)
			if code != tc.status || body.Error == nil || body.Error.Code != tc.code || body.Error.Message == "" {
				t.Fatalf("%s %s: %d %+v, want %d %s", tc.method, tc.path, code, body.Error, tc.status, tc.code)
			}
		})
	}
	var after wire.Session
	e.do("GET", "/v1/sessions/s", nil, "", &after)
	if after.ETag != s.ETag || after.Title != s.Title {
		t.Fatalf("session changed: %+v -> %+v", s, after)
	}
	if got := e.history("s"); !reflect.DeepEqual(got, before) {
		t.Fatalf("events changed:\n%s\n%s", before, got)
	}
	var ok wire.Session
	if code, _ := e.do("GET", "/healthz", map[string]string{"Authorization": ""}, "", &ok); code != 200 {
		t.Fatalf("healthz without token: %d", code)
	}
}

func TestHistoryPaging(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	for i := range 7 {
		e.do("PUT", "/v1/sessions/s/inputs/"+uuid1[:35]+string(rune('2'+i)), nil, `{"text":"x"}`, nil)
	}
	e.settle("s", 7) // 7 turns of 4 events: 28
	var p wire.Page
	e.do("GET", "/v1/sessions/s/events?after=2&limit=3", nil, "", &p)
	if len(p.Events) != 3 || p.Events[0].Offset != 3 || p.Head != 28 || !p.More {
		t.Fatalf("forward page %+v", p)
	}
	e.do("GET", "/v1/sessions/s/events?before=3&limit=5", nil, "", &p)
	if len(p.Events) != 2 || p.Events[0].Offset != 1 || p.More {
		t.Fatalf("backward page %+v", p)
	}
	e.do("GET", "/v1/sessions/s/events?after=26", nil, "", &p)
	if len(p.Events) != 2 || p.More || p.Events[1].Offset != 28 {
		t.Fatalf("last page %+v", p)
	}
}
