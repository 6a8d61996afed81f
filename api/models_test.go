package api

import (
	"net/http"
	"slices"
	"testing"

	"albedo/hub/provider/fakeanthropic"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// GET /v1/providers/{name}/models lists what a model picker offers: an
// OpenAI-compatible server's GET /models by id, Anthropic's models with
// their names, each with the profile's default; read once and kept a
// while; echo lists none; a server that fails says so, retryable.
func TestModelsOfAProvider(t *testing.T) {
	t.Parallel()
	e, fo, _ := filesEnv(t)
	var ms wire.Models
	if code, _ := e.do("GET", "/v1/providers/gpt/models", nil, "", &ms); code != 200 || ms.Provider != "gpt" || ms.Default != "gpt-4o" ||
		!slices.Equal(modelIDs(ms.Models), fakeopenai.DefaultModels) {
		t.Fatalf("gpt's: %d %+v", code, ms)
	}
	if code, _ := e.do("GET", "/v1/providers/claude/models", nil, "", &ms); code != 200 || ms.Default != "claude-test" ||
		len(ms.Models) != len(fakeanthropic.Models) || ms.Models[0] != (wire.ModelInfo{ID: fakeanthropic.Models[0][0], Name: fakeanthropic.Models[0][1]}) {
		t.Fatalf("claude's: %d %+v", code, ms)
	}
	// Kept: a server that lists others now is read again only later.
	fo.SetModels([]string{"other"})
	if code, _ := e.do("GET", "/v1/providers/gpt/models", nil, "", &ms); code != 200 || !slices.Equal(modelIDs(ms.Models), fakeopenai.DefaultModels) {
		t.Fatalf("gpt's again: %d %+v", code, ms)
	}
	var er wire.ErrorBody
	if code, _ := e.do("GET", "/v1/providers/echo/models", nil, "", &er); code != http.StatusBadRequest {
		t.Fatalf("echo's: %d %+v", code, er)
	}
	if code, _ := e.do("GET", "/v1/providers/nosuch/models", nil, "", &er); code != http.StatusNotFound {
		t.Fatalf("no such provider: %d %+v", code, er)
	}
	link := e.link(e.create("s").ID, wire.LinkCreate{})
	if code, _ := e.do("GET", "/v1/providers/gpt/models", e.as(link.Token), "", nil); code != http.StatusForbidden {
		t.Fatalf("a link's viewer: %d", code)
	}

	e2, fo2, _ := filesEnv(t)
	fo2.SetModels(nil)
	if code, _ := e2.do("GET", "/v1/providers/gpt/models", nil, "", &er); code != http.StatusServiceUnavailable || er.Error.Code != wire.CodeUnavailable {
		t.Fatalf("a server that fails: %d %+v", code, er)
	}
}

func modelIDs(ms []wire.ModelInfo) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}
