package api

import (
	"net/http"
	"strings"
	"testing"

	"albedo/wire"
)

// A hello's reply hands out a session token that stands for its token on
// HTTP: it works while the token does, ends with its revocation, and a
// forged one, or one of another boot, is refused.
func TestSessionTokensStandForTheirToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	ann := e.member("ann", false)
	e.grant("s", "ann", wire.AccessRead)
	w := e.dialToken(ann.Token)
	r := w.Hello()
	if !strings.HasPrefix(r.SessionToken, sessionPrefix) {
		t.Fatalf("hello's session token %q", r.SessionToken)
	}
	if code, _ := e.do("GET", "/v1/sessions/s", e.as(r.SessionToken), "", nil); code != http.StatusOK {
		t.Fatalf("the session token: %d", code)
	}
	if code, _ := e.do("GET", "/v1/members", e.as(r.SessionToken), "", nil); code != http.StatusForbidden {
		t.Fatalf("a member's session token lists members: %d", code)
	}
	forged := r.SessionToken[:len(r.SessionToken)-1] + map[bool]string{true: "0", false: "1"}[strings.HasSuffix(r.SessionToken, "1")]
	other := newEnv(t, Options{}).srv.sessionToken(e.srv.owner)
	for name, tok := range map[string]string{"forged": forged, "another boot's": other, "no id": sessionPrefix + "." + e.srv.sessionMAC("")} {
		if code, _ := e.do("GET", "/v1/sessions", e.as(tok), "", nil); code != http.StatusUnauthorized {
			t.Errorf("a %s session token: %d", name, code)
		}
	}
	owner := e.dial(true).Hello().SessionToken
	if code, _ := e.do("GET", "/v1/members", e.as(owner), "", nil); code != http.StatusOK {
		t.Fatalf("the owner's session token: %d", code)
	}
	e.do("DELETE", "/v1/members/ann", nil, "", nil)
	if code, _ := e.do("GET", "/v1/sessions/s", e.as(r.SessionToken), "", nil); code != http.StatusUnauthorized {
		t.Fatalf("the session token of a removed member: %d", code)
	}
}
