package ws

import (
	"strings"
	"testing"

	"albedo/wire"
)

// Before hello, prove answers with the HMAC of the nonce under the key;
// a nonce out of bounds, or no key, is bad_request; hello follows as ever.
func TestProveBeforeHello(t *testing.T) {
	t.Parallel()
	key := []byte("0123456789abcdef0123456789abcdef")
	e := newEnv(t, Options{ProofKey: key})
	w := e.dial(true)
	nonce := strings.Repeat("n", wire.MinNonce)
	w.Send(wire.Command{ID: 1, Op: wire.OpProve, Nonce: nonce})
	if r := w.Reply(1); !r.OK || r.Proof != Proof(key, nonce) || r.Proof == Proof([]byte("another key"), nonce) {
		t.Fatalf("prove: %+v", r)
	}
	for i, n := range []string{"short", strings.Repeat("n", wire.MaxNonce+1)} {
		w.Send(wire.Command{ID: int64(2 + i), Op: wire.OpProve, Nonce: n})
		if r := w.Reply(int64(2 + i)); r.OK || r.Error.Code != wire.CodeBadRequest {
			t.Errorf("a %d-byte nonce: %+v", len(n), r)
		}
	}
	if r := w.Hello(); !r.OK {
		t.Fatalf("hello after prove: %+v", r.Error)
	}
	none := newEnv(t, Options{}).dial(true)
	none.Send(wire.Command{ID: 1, Op: wire.OpProve, Nonce: nonce})
	if r := none.Reply(1); r.OK || r.Error.Code != wire.CodeBadRequest {
		t.Fatalf("prove with no key: %+v", r)
	}
}
