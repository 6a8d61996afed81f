package api

import (
	"encoding/json"
	"strings"
	"testing"

	"albedo/hub/provider"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// A session's system text is set by PATCH (with its etag, as model and
// effort are), said in a settings event, and sent to the provider before
// the transcript; a session with none gets its profile's. Past
// MaxSystemBytes it is too_large, and nothing changes.
func TestSystemTextGoesFirst(t *testing.T) {
	t.Parallel()
	e, f := newFakeEnvAs(t, "fake", func(p *provider.Profile) { p.System = "You answer in French." })
	s := e.createWith("s", `{"provider":"fake","title":"titled"}`)
	firstOf := func(r fakeopenai.Request) (role, text string) {
		var m struct{ Role, Content string }
		json.Unmarshal(r.Messages[0], &m)
		return m.Role, m.Content
	}
	e.say("s", "one")
	e.settle("s", 1)
	if role, text := firstOf(f.Requests()[0]); role != "system" || text != "You answer in French." {
		t.Fatalf("with the profile's: first message %s %q", role, text)
	}

	var patched wire.Session
	if code, _ := e.do("PATCH", "/v1/sessions/s", map[string]string{"If-Match": s.ETag}, `{"system":"Be brief."}`, &patched); code != 200 || patched.System != "Be brief." {
		t.Fatalf("PATCH system: %d %+v", code, patched)
	}
	huge := `{"system":"` + strings.Repeat("x", wire.MaxSystemBytes+1) + `"}`
	var er wire.ErrorBody
	if code, _ := e.do("PATCH", "/v1/sessions/s", map[string]string{"If-Match": patched.ETag}, huge, &er); code != 413 || er.Error.Code != wire.CodeTooLarge {
		t.Fatalf("a system text too large: %d %+v", code, er)
	}
	e.say("s", "two")
	evs := e.settle("s", 2)
	var said bool
	for _, ev := range evs {
		if ev.Type == wire.EventSettings && ev.System != nil && *ev.System == "Be brief." {
			said = true
		}
	}
	if !said {
		t.Fatalf("no settings event says the system text: %+v", evs)
	}
	reqs := f.Requests()
	if role, text := firstOf(reqs[len(reqs)-1]); role != "system" || text != "Be brief." {
		t.Fatalf("with the session's: first message %s %q", role, text)
	}
}
