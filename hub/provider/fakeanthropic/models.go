package fakeanthropic

import (
	"encoding/json"
	"net/http"
)

// Models are what GET /v1/models lists: ids and display names.
var Models = [][2]string{{"claude-test", "Claude Test"}, {"claude-test-large", "Claude Test Large"}}

// listModels answers GET /v1/models as Anthropic does: a page of model
// objects, the newest first, with its ids and has_more.
func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	type model struct {
		Type        string `json:"type"`
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
		CreatedAt   string `json:"created_at"`
	}
	data := make([]model, len(Models))
	for i, m := range Models {
		data[i] = model{Type: "model", ID: m[0], DisplayName: m[1], CreatedAt: "2026-01-01T00:00:00Z"}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"data": data, "has_more": false, "first_id": Models[0][0], "last_id": Models[len(Models)-1][0]})
}
