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

	// The owner's own message is read by them: their marker is past it.
	var m wire.ReadMark
	if code, _ := e.do("GET", "/v1/sessions/s/read", nil, "", &m); code != 200 || m.Offset != 1 {
		t.Fatalf("after their own message: %d %+v", code, m)
	}
	if code, _ := e.do("PUT", "/v1/sessions/s/read", nil, `{"offset":0}`, &m); code != 200 || m.Offset != 0 {
		t.Fatalf("PUT: %d %+v", code, m)
	}
	f := mine.Next(func(f wire.Frame) bool { return f.Op == wire.PushRead })
	if f.Read.Session != "s" || f.Read.Offset != 0 {
		t.Fatalf("the push: %+v", f.Read)
	}
	if code, _ := e.do("GET", "/v1/sessions/s/read", nil, "", &m); code != 200 || m.Offset != 0 {
		t.Fatalf("GET: %d %+v", code, m)
	}
	// Ann's marker is hers: the owner's did not move it, and hers does
	// not move the owner's.
	if code, _ := e.do("GET", "/v1/sessions/s/read", e.as(ann.Token), "", &m); code != 200 || m.Offset != 0 {
		t.Fatalf("ann's: %d %+v", code, m)
	}
	if code, _ := e.do("PUT", "/v1/sessions/s/read", e.as(ann.Token), `{"offset":1}`, nil); code != 200 {
		t.Fatalf("ann's PUT: %d", code)
	}
	if f := hers.Next(func(f wire.Frame) bool { return f.Op == wire.PushRead }); f.Read.Offset != 1 {
		t.Fatalf("ann's push: %+v", f.Read)
	}
	if code, _ := e.do("GET", "/v1/sessions/s/read", nil, "", &m); m.Offset != 0 {
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

// A person's own message is read by them on every device: its commit
// moves their read marker past it (a read push to their other
// connections, unread 0), while it counts as unread to everyone else; a
// repeat of the same input moves nothing back, and a bot has no marker.
func TestYourOwnMessagesAreRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	s := e.create("s")
	ann := e.member("ann", false)
	e.grant("s", "ann", wire.AccessWrite)
	phone := e.dialToken(ann.Token).HelloFromStart(s)
	laptop := e.dialToken(ann.Token)
	laptop.Hello()
	feedOf(t, laptop, wire.Command{})

	phone.Send(wire.Command{ID: 2, Op: wire.OpSend, Session: "s", InputID: newUUID(), Text: "mine"})
	msg := phone.Next(func(f wire.Frame) bool {
		return f.Op == wire.PushEvent && f.Event.Type == wire.EventMessage && f.Event.Text == "mine"
	}).Event.Offset
	f := laptop.Next(func(f wire.Frame) bool { return f.Op == wire.PushRead })
	if f.Read.Session != "s" || f.Read.Offset != msg || f.Read.Unread != 0 {
		t.Fatalf("ann's other device: %+v, her message at %d", f.Read, msg)
	}
	var m wire.ReadMark
	if code, _ := e.do("GET", "/v1/sessions/s/read", e.as(ann.Token), "", &m); code != 200 || m.Offset != msg {
		t.Fatalf("ann's marker: %d %+v, want %d", code, m, msg)
	}
	// To the owner, who has not read it, it is unread.
	if r := feedOf(t, e.dialHello(), wire.Command{}); r.Sessions[0].ID != "s" || r.Sessions[0].Read != 0 || r.Sessions[0].Unread < 1 {
		t.Fatalf("the owner's feed: %+v", r.Sessions[0])
	}

	// Over HTTP too; a repeat of the input leaves a marker set back since.
	path := "/v1/sessions/s/inputs/" + newUUID()
	if code, _ := e.do("PUT", path, e.as(ann.Token), `{"text":"again"}`, nil); code != http.StatusAccepted {
		t.Fatalf("input: %d", code)
	}
	if code, _ := e.do("GET", "/v1/sessions/s/read", e.as(ann.Token), "", &m); m.Offset <= msg {
		t.Fatalf("ann's marker after an HTTP input: %d %+v", code, m)
	}
	if code, _ := e.do("PUT", "/v1/sessions/s/read", e.as(ann.Token), `{"offset":0}`, nil); code != 200 {
		t.Fatalf("set back: %d", code)
	}
	if code, _ := e.do("PUT", path, e.as(ann.Token), `{"text":"again"}`, nil); code != http.StatusAccepted {
		t.Fatalf("repeat: %d", code)
	}
	if code, _ := e.do("GET", "/v1/sessions/s/read", e.as(ann.Token), "", &m); m.Offset != 0 {
		t.Fatalf("a repeat moved the marker: %d %+v", code, m)
	}
}
