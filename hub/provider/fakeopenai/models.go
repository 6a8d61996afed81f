package fakeopenai

import (
	"encoding/json"
	"net/http"
)

// DefaultModels are the models GET /v1/models lists until SetModels.
var DefaultModels = []string{"fake-large", "fake-model"} // sorted, as the daemon lists them

// SetModels sets what GET /v1/models lists; nil answers it with a 500.
func (s *Server) SetModels(ids []string) {
	s.mu.Lock()
	s.models, s.modelsSet = ids, true
	s.mu.Unlock()
}

// listModels answers GET /v1/models as OpenAI does: a list object of
// model objects.
func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ids, set := s.models, s.modelsSet
	s.mu.Unlock()
	if !set {
		ids = DefaultModels
	}
	if ids == nil {
		http.Error(w, `{"error":{"message":"models are down","type":"server_error"}}`, http.StatusInternalServerError)
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	data := make([]model, len(ids))
	for i, id := range ids {
		data[i] = model{ID: id, Object: "model", Created: 1700000000, OwnedBy: "fake"}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}
