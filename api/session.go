package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
	"time"

	"albedo/hub/access"
)

// Session tokens are what a page sends with its HTTP calls instead of its
// own token: a hello's reply hands one out (wire.Reply.SessionToken), good
// for the principal of that hello until this daemon stops. It names the
// token it stands for and is signed with a secret of this boot, so it
// costs no state, ends with its token's revocation, and is worth nothing
// to a process that records it once this daemon is gone.

const sessionPrefix = "alsess_"

// ownerSession stands for daemon.json's token, which has no id.
const ownerSession = "-"

// sessionToken makes p's session token.
func (s *Server) sessionToken(p access.Principal) string {
	id := p.TokenID
	if id == "" {
		id = ownerSession
	}
	return sessionPrefix + id + "." + s.sessionMAC(id)
}

func (s *Server) sessionMAC(id string) string {
	m := hmac.New(sha256.New, s.boot)
	m.Write([]byte(id))
	return hex.EncodeToString(m.Sum(nil))
}

// fromSessionToken is the principal a session token stands for, if this
// boot made it and its token still stands.
func (s *Server) fromSessionToken(tok string) (access.Principal, bool) {
	id, mac, ok := strings.Cut(strings.TrimPrefix(tok, sessionPrefix), ".")
	if !ok || id == "" || subtle.ConstantTimeCompare([]byte(mac), []byte(s.sessionMAC(id))) != 1 {
		return access.Principal{}, false
	}
	if id == ownerSession {
		return s.ownerP(), true
	}
	p, ok := s.hub.Current(access.Principal{TokenID: id})
	if !ok || p.Expired(time.Now()) {
		return access.Principal{}, false
	}
	return p, true
}
