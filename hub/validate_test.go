package hub

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"albedo/api/wire"
)

// A bot's reply with U+0000 is refused naming the field, before the turn
// is touched: the same rule as every text field.
func TestBotReplyWithNULIsABadRequest(t *testing.T) {
	h := newTestHub(t, Options{})
	c := h.Connect(ConnInfo{Name: "bot"})
	defer c.Close()
	for _, tc := range []struct{ text, errText, field string }{{"a\x00", "", "text"}, {"", "oops\x00", "error"}} {
		err := h.Reply(c, "some-turn", tc.text, false, tc.errText)
		if we, ok := err.(*wire.Error); !ok || we.Code != wire.CodeBadRequest || !strings.Contains(we.Message, tc.field) {
			t.Fatalf("reply %q/%q: %v, want bad_request naming %s", tc.text, tc.errText, err, tc.field)
		}
	}
}

// FuzzCanonicalUUID: whatever canonicalUUID accepts is one UUID written the
// one way uuid.UUID.String writes it, so no input can be named twice.
func FuzzCanonicalUUID(f *testing.F) {
	for _, s := range []string{"0190a8a0-0000-7000-8000-000000000001", "0190A8A0-0000-7000-8000-000000000001",
		"{0190a8a0-0000-7000-8000-000000000001}", "urn:uuid:0190a8a0-0000-7000-8000-000000000001",
		"0190a8a000007000800000000000000001", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !canonicalUUID(s) {
			return
		}
		u, err := uuid.Parse(s)
		if err != nil || u.String() != s || len(s) != 36 || strings.ToLower(s) != s {
			t.Fatalf("canonicalUUID accepted %q (%v)", s, err)
		}
	})
}
