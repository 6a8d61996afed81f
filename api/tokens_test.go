package api

import (
	"strings"
	"testing"

	"albedo/api/ws"
	"albedo/wire"
)

// Owner tokens through the API: made (shown once), listed without the
// token, accepted as the owner, refused once removed with their websockets
// closed with 4401; a role other than owner, a bad or taken name, and a
// missing token are 4xx with their code.
func TestOwnerTokensThroughTheAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	var made struct{ Role, Name, Token string }
	if code, _ := e.do("POST", "/v1/tokens", nil, `{"role":"owner","name":"ops"}`, &made); code != 201 || made.Role != "owner" || made.Name != "ops" || !strings.HasPrefix(made.Token, "alown_") {
		t.Fatalf("add: %d %+v", code, made)
	}
	if code, _ := e.do("GET", "/v1/sessions/s", e.as(made.Token), "", nil); code != 200 {
		t.Fatalf("the new owner token reads a session: %d", code)
	}
	var list struct {
		Tokens []map[string]any `json:"tokens"`
	}
	if code, _ := e.do("GET", "/v1/tokens", nil, "", &list); code != 200 || len(list.Tokens) != 1 || list.Tokens[0]["name"] != "ops" || list.Tokens[0]["role"] != "owner" {
		t.Fatalf("list: %d %+v", code, list)
	}
	if _, ok := list.Tokens[0]["token"]; ok {
		t.Fatalf("list shows a token: %+v", list.Tokens[0])
	}

	w := e.dialToken(made.Token)
	w.Hello()
	if code, _ := e.do("DELETE", "/v1/tokens/ops", nil, "", nil); code != 204 {
		t.Fatalf("remove: %d", code)
	}
	if code := w.Closed(); code != ws.StatusBadToken {
		t.Fatalf("the removed token's websocket closed with %d, want 4401", code)
	}
	if code, _ := e.do("GET", "/v1/sessions/s", e.as(made.Token), "", nil); code != 401 {
		t.Fatalf("the removed token: %d, want 401", code)
	}

	for _, tc := range []struct {
		method, path, body string
		status             int
		code               wire.Code
	}{
		{"POST", "/v1/tokens", `{"name":"x"}`, 400, wire.CodeBadRequest},
		{"POST", "/v1/tokens", `{"role":"bot","name":"x"}`, 400, wire.CodeBadRequest},
		{"POST", "/v1/tokens", `{"role":"viewer","name":"x"}`, 400, wire.CodeBadRequest},
		{"POST", "/v1/tokens", `{"role":"root","name":"x"}`, 400, wire.CodeBadRequest},
		{"POST", "/v1/tokens", `{"role":"owner","name":"Not A Name"}`, 400, wire.CodeBadRequest},
		{"POST", "/v1/tokens", `{"role":"owner","name":"` + strings.Repeat("a", 65) + `"}`, 400, wire.CodeBadRequest},
		{"POST", "/v1/tokens", `{"role":"owner","name":"dup"}`, 201, ""},
		{"POST", "/v1/tokens", `{"role":"owner","name":"dup"}`, 409, wire.CodeConflict},
		{"POST", "/v1/tokens", `{"role":"owner"`, 400, wire.CodeBadRequest},
		{"DELETE", "/v1/tokens/ops", "", 404, wire.CodeNotFound},
	} {
		var eb wire.ErrorBody
		code, _ := e.do(tc.method, tc.path, nil, tc.body, &eb)
		if code != tc.status || (tc.code != "" && (eb.Error == nil || eb.Error.Code != tc.code)) {
			t.Errorf("%s %s %s: %d %+v, want %d %s", tc.method, tc.path, tc.body, code, eb.Error, tc.status, tc.code)
		}
	}
}
