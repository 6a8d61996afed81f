package api

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"net/http"
	"net/url"

	"golang.org/x/net/http/httpguts"

	"albedo/hub/access"
)

// upgradeLine is the request line of every upgrade the listener serves
// itself (upgrades.go); any other goes to net/http.
const upgradeLine = "GET /v1/ws HTTP/1.1\r\n"

// upgradeHeadersMax bounds the header lines of a request taken here.
const upgradeHeadersMax = 64

// wsRoute is the websocket's route in the permission table.
const wsRoute = "GET /v1/ws"

// mayBeUpgrade says whether b, the first bytes of a connection, may begin
// a request upgradeRequest takes.
func mayBeUpgrade(b []byte) bool {
	k := min(len(b), len(upgradeLine))
	return string(b[:k]) == upgradeLine[:k]
}

// upgradeRequest parses b, a request's header whole (up to its blank
// line), into the request net/http would make of it, if b is an upgrade
// this path takes: the upgrade line, then header lines each ended by
// CRLF, with names and values net/http takes, and one Host. Anything else
// (a body, a folded line, a bare LF, a header net/http would refuse or
// mend) is not taken (false), and net/http answers it.
func upgradeRequest(b []byte) (*http.Request, bool) {
	rest, ok := bytes.CutPrefix(b, []byte(upgradeLine))
	if !ok {
		return nil, false
	}
	h := make(http.Header, 8)
	var host string
	hosts := 0
	for lines := 0; ; lines++ {
		line, after, ok := bytes.Cut(rest, []byte("\r\n"))
		if !ok || lines > upgradeHeadersMax {
			return nil, false
		}
		rest = after
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || bytes.IndexByte(line, '\n') >= 0 {
			return nil, false
		}
		key := string(name)
		v := string(bytes.Trim(value, " \t"))
		if !httpguts.ValidHeaderFieldName(key) || !httpguts.ValidHeaderFieldValue(v) {
			return nil, false
		}
		key = http.CanonicalHeaderKey(key)
		switch key {
		case "Host":
			host, hosts = v, hosts+1
			continue
		case "Content-Length", "Transfer-Encoding", "Expect":
			return nil, false // a body, or an expectation net/http answers
		}
		h[key] = append(h[key], v)
	}
	if hosts != 1 || len(rest) != 0 {
		return nil, false
	}
	// As net/http mends an HTTP/1.0 cache's word (browsers send both).
	if p := h["Pragma"]; len(p) > 0 && p[0] == "no-cache" && h["Cache-Control"] == nil {
		h["Cache-Control"] = []string{"no-cache"}
	}
	return &http.Request{
		Method: http.MethodGet, URL: &url.URL{Path: "/v1/ws"}, RequestURI: "/v1/ws",
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Host: host,
	}, true
}

// upgradeAllowed applies to an upgrade the checks of the echo chain in
// front of GET /v1/ws (checkHost, requireToken), saying whether it passes
// and with what principal, if its header carried a token.
func (s *Server) upgradeAllowed(r *http.Request) (p access.Principal, authed, ok bool) {
	if s.hostRefused(r) != nil {
		return p, false, false
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return p, false, true // the token comes in hello
	}
	p, werr := s.tokenPrincipal(h)
	if werr != nil || p.Authorize(permissions[wsRoute], doing[wsRoute], "") != nil {
		return p, false, false
	}
	return p, true, true
}

// upgradeWriter is the http.ResponseWriter of an upgrade served here.
// The 101 is written by the websocket's lean socket (api/ws); any other
// status means a refusal, which this writer swallows, so that net/http
// answers the request instead (upgradeListener.serveUpgrade).
type upgradeWriter struct {
	conn   *openTCPConn
	rest   []byte // what came after the request's header
	header http.Header

	refused  bool
	hijacked bool
}

func (w *upgradeWriter) Header() http.Header {
	if w.header == nil {
		w.header = make(http.Header, 4)
	}
	return w.header
}

// WriteHeader takes any status as a refusal: the 101 never comes here but
// when the lean socket cannot write it, and then net/http answers.
func (w *upgradeWriter) WriteHeader(int) { w.refused = true }

func (w *upgradeWriter) Write(b []byte) (int, error) {
	w.refused = true
	return len(b), nil
}

var errRefused = errors.New("the upgrade is answered by net/http")

// Hijack hands the connection over, with what came after the header
// buffered.
func (w *upgradeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.refused || w.hijacked {
		return nil, nil, errRefused
	}
	w.hijacked = true
	br := bufio.NewReaderSize(bytes.NewReader(w.rest), max(len(w.rest), 16))
	_, _ = br.Peek(len(w.rest))
	return w.conn, bufio.NewReadWriter(br, bufio.NewWriterSize(w.conn, 16)), nil
}
