package ws

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"

	"albedo/wire"
)

// Before a page says hello with its token, the daemon proves it is the
// one the page's link is for: the link carries a key the daemon keeps
// (daemon.key in its home), the page sends a fresh nonce, and the daemon
// answers with an HMAC of it under that key. A process that took the port
// while the daemon was down has no key, so the page never hands it its
// token (docs/security.md says what this covers and what it does not).

// prove answers a prove command: the proof, or why there is none.
func (wc *conn) prove(cmd wire.Command) any {
	key := wc.s.opts.ProofKey
	switch {
	case len(key) == 0:
		return errorReply(cmd.ID, wire.Errorf(wire.CodeBadRequest, "this daemon has no key to prove itself with"))
	case len(cmd.Nonce) < wire.MinNonce || len(cmd.Nonce) > wire.MaxNonce:
		return errorReply(cmd.ID, wire.Errorf(wire.CodeBadRequest, "a nonce is %d-%d bytes", wire.MinNonce, wire.MaxNonce))
	}
	return wire.Reply{ID: cmd.ID, OK: true, Proof: Proof(key, cmd.Nonce)}
}

// Proof is the daemon's proof for nonce under key:
// hex(HMAC-SHA256(key, wire.ProofContext + nonce)).
func Proof(key []byte, nonce string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(wire.ProofContext + nonce))
	return hex.EncodeToString(m.Sum(nil))
}
