package hub

import (
	"context"
	"strings"
	"testing"

	"albedo/wire"
)

// A bot's reply with U+0000 is refused naming the field, before the turn
// is touched: the same rule as every text field.
func TestBotReplyWithNULIsABadRequest(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	c := h.Connect(ConnInfo{Name: "bot"})
	defer c.Close()
	for _, tc := range []struct{ text, errText, field string }{{"a\x00", "", "text"}, {"", "oops\x00", "error"}} {
		err := h.Reply(c, "some-turn", tc.text, false, tc.errText, nil, func(error) {})
		if we, ok := err.(*wire.Error); !ok || we.Code != wire.CodeBadRequest || !strings.Contains(we.Message, tc.field) {
			t.Fatalf("reply %q/%q: %v, want bad_request naming %s", tc.text, tc.errText, err, tc.field)
		}
	}
}

// SubmitInput and SubmitPost check their input themselves, as PutInput
// does: a malformed one is refused with its error, before the database,
// and its then is never called.
func TestSubmitChecksItsInput(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{MaxInput: 8})
	ctx := context.Background()
	if _, _, err := h.CreateSession(ctx, "s", wire.SessionCreate{Title: "t"}); err != nil {
		t.Fatal(err)
	}
	const id = "0190a8a0-0000-7000-8000-000000000001"
	for _, tc := range []struct {
		name, session, id, text string
		code                    wire.Code
	}{
		{"no session", "", id, "hi", wire.CodeBadRequest},
		{"no input_id", "s", "", "hi", wire.CodeBadRequest},
		{"input_id not canonical", "s", strings.ToUpper(id), "hi", wire.CodeBadRequest},
		{"no text", "s", id, "", wire.CodeBadRequest},
		{"text over the limit", "s", id, "123456789", wire.CodeTooLarge},
		{"NUL in the text", "s", id, "a\x00", wire.CodeBadRequest},
	} {
		for name, submit := range map[string]func(context.Context, string, string, string, []wire.Attachment, wire.Author, func(wire.Receipt, error)) error{
			"SubmitInput": h.SubmitInput, "SubmitPost": h.SubmitPost,
		} {
			err := submit(ctx, tc.session, tc.id, tc.text, nil, wire.Author{Name: "user"}, func(wire.Receipt, error) {
				t.Errorf("%s, %s: then was called", name, tc.name)
			})
			if we, ok := err.(*wire.Error); !ok || we.Code != tc.code {
				t.Errorf("%s, %s: %v, want %s", name, tc.name, err, tc.code)
			}
		}
	}
	done := make(chan error, 1)
	if err := h.SubmitInput(ctx, "s", id, "hi", nil, wire.Author{Name: "user"}, func(_ wire.Receipt, err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// FuzzParseSessionCursor: a cursor read is one SessionCursor writes back
// the same, of an id a session may have; anything else is a bad_request.
func FuzzParseSessionCursor(f *testing.F) {
	for _, s := range []string{"", "!!", SessionCursor("s1"), SessionCursor("019ad2f1-7c00-7000-8000-00000039d669"),
		"czE=", "czE\n", "czF", "Li4vYQ", "LWE"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, c string) {
		id, err := ParseSessionCursor(c)
		if err != nil {
			if we, ok := err.(*wire.Error); !ok || we.Code != wire.CodeBadRequest {
				t.Fatalf("ParseSessionCursor(%q): %v", c, err)
			}
			return
		}
		if !validID.MatchString(id) || SessionCursor(id) != c {
			t.Fatalf("ParseSessionCursor(%q) = %q, which writes back %q", c, id, SessionCursor(id))
		}
	})
}
