package api

import (
	"net/http"
	"testing"

	"albedo/wire"
)

// A person's read marker is stored: PUT sets it (not past the head), GET
// reads it, and their other connections that follow the session hear of
// it at once (a read push); another person's do not; a link's viewers,
// who are no one person, have none.
func TestReadMarkers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	e.say("s", "one")
	ann := e.member("ann", false)
	e.grant("s", "ann", wire.AccessRead)
	mine := e.dial(true) // the owner's other device
	mine.Hello(wire.Sub{Session: "s"})
	hers := e.dialToken(ann.Token)
	hers.Hello(wire.Sub{Session: "s"})

	var m wire.ReadMark
	if code, _ := e.do("GET", "/v1/sessions/s/read", nil, "", &m); code != 200 || m.Offset != 0 {
		t.Fatalf("before any: %d %+v", code, m)
	}
	if code, _ := e.do("PUT", "/v1/sessions/s/read", nil, `{"offset":1}`, &m); code != 200 || m.Offset != 1 {
		t.Fatalf("PUT: %d %+v", code, m)
	}
	f := mine.Next(func(f wire.Frame) bool { return f.Op == wire.PushRead })
	if f.Read.Session != "s" || f.Read.Offset != 1 {
		t.Fatalf("the push: %+v", f.Read)
	}
	if code, _ := e.do("GET", "/v1/sessions/s/read", nil, "", &m); code != 200 || m.Offset != 1 {
		t.Fatalf("GET: %d %+v", code, m)
	}
	// Ann's marker is hers: the owner's did not move it, and hers does
	// not move the owner's.
	if code, _ := e.do("GET", "/v1/sessions/s/read", e.as(ann.Token), "", &m); code != 200 || m.Offset != 0 {
		t.Fatalf("ann's: %d %+v", code, m)
	}
	if code, _ := e.do("PUT", "/v1/sessions/s/read", e.as(ann.Token), `{"offset":0}`, nil); code != 200 {
		t.Fatalf("ann's PUT: %d", code)
	}
	if f := hers.Next(func(f wire.Frame) bool { return f.Op == wire.PushRead }); f.Read.Offset != 0 {
		t.Fatalf("ann's push: %+v", f.Read)
	}
	if code, _ := e.do("GET", "/v1/sessions/s/read", nil, "", &m); m.Offset != 1 {
		t.Fatalf("the owner's after ann's: %d %+v", code, m)
	}

	var er wire.ErrorBody
	if code, _ := e.do("PUT", "/v1/sessions/s/read", nil, `{"offset":99}`, &er); code != http.StatusBadRequest || er.Error.Code != wire.CodeBadRequest {
		t.Fatalf("past the head: %d %+v", code, er)
	}
	if code, _ := e.do("PUT", "/v1/sessions/s/read", nil, `{"offset":-1}`, nil); code != http.StatusBadRequest {
		t.Fatalf("negative: %d", code)
	}
	link := e.link("s", wire.LinkCreate{})
	if code, _ := e.do("GET", "/v1/sessions/s/read", e.as(link.Token), "", nil); code != http.StatusForbidden {
		t.Fatalf("a link's viewer: %d", code)
	}
	if code, _ := e.do("PUT", "/v1/sessions/nosuch/read", nil, `{"offset":0}`, nil); code != http.StatusNotFound {
		t.Fatalf("no such session: %d", code)
	}
}
