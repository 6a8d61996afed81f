package api

import (
	"net/http"
	"testing"

	"albedo/wire"
)

// A session's temperature is a setting: PATCHed (0 to 2; -1 gives it back
// to the provider's own), a settings event, kept by a fork, and sent to
// an OpenAI-compatible provider's turns; Anthropic's API takes none.
func TestASessionsTemperatureIsSent(t *testing.T) {
	t.Parallel()
	e, fo, fa := filesEnv(t)
	// Titled: an untitled session is titled after its first turn, which
	// would change its ETag between a GET and a PATCH.
	g := e.createWith("g", `{"provider":"gpt","title":"g"}`)
	if g.Temperature != nil {
		t.Fatalf("a new session's temperature: %v", *g.Temperature)
	}
	e.say("g", "one")
	e.settle("g", 1)
	if r := fo.Requests()[0]; r.Temperature != nil {
		t.Fatalf("sent with none chosen: %v", *r.Temperature)
	}
	code, s, _ := e.patch("g", `{"temperature":0.3}`)
	if code != 200 || s.Temperature == nil || *s.Temperature != 0.3 {
		t.Fatalf("patch: %d %+v", code, s)
	}
	evs := e.events("g")
	if last := evs[len(evs)-1]; last.Type != wire.EventSettings || last.Temperature == nil || *last.Temperature != 0.3 {
		t.Fatalf("the settings event: %+v", last)
	}
	e.say("g", "two")
	e.settle("g", 2)
	if r := fo.Requests()[1]; r.Temperature == nil || *r.Temperature != 0.3 {
		t.Fatalf("the second turn sent %v", r.Temperature)
	}
	f, _ := e.forkOf("g", `{"at":0}`, http.StatusCreated)
	if f.Temperature == nil || *f.Temperature != 0.3 {
		t.Fatalf("the fork's: %+v", f.Temperature)
	}
	if code, s, _ := e.patch("g", `{"temperature":-1}`); code != 200 || s.Temperature != nil {
		t.Fatalf("back to the provider's own: %d %+v", code, s.Temperature)
	}
	if code, _, er := e.patch("g", `{"temperature":2.5}`); code != http.StatusBadRequest || er.Error.Code != wire.CodeBadRequest {
		t.Fatalf("2.5: %d %+v", code, er)
	}

	e.createWith("c", `{"provider":"claude"}`)
	e.patch("c", `{"temperature":0.5}`)
	e.say("c", "hello")
	e.settle("c", 1)
	if r := fa.Requests()[0]; r.Temperature != nil {
		t.Fatalf("anthropic was sent %v", *r.Temperature)
	}
}
