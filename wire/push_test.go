package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestFrameOp(t *testing.T) {
	cases := []struct {
		frame string
		want  Op
		err   bool
	}{
		{`{"op":"event","session":"s","event":{"offset":1}}`, PushEvent, false},
		{`{"op":"bye","reason":"shutdown","retry_after_ms":250}`, PushBye, false},
		{`{"id":3,"ok":true}`, "", false},
		{`{"session":"s","op":"status"}`, PushStatus, false}, // op not first: decoded
		{`{"op":"ev\u0065nt"}`, PushEvent, false},            // escaped: decoded
		{`{"op" : "delta"}`, PushDelta, false},
		{`{"op":5}`, "", true},
		{`not json`, "", true},
	}
	for _, tc := range cases {
		got, err := FrameOp([]byte(tc.frame))
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("FrameOp(%s) = %q, %v; want %q, error %v", tc.frame, got, err, tc.want, tc.err)
		}
	}
}

// FuzzFrameOp checks the shortcut against encoding/json: whatever op a
// frame's full decoding finds, FrameOp finds too.
func FuzzFrameOp(f *testing.F) {
	for _, s := range []string{
		`{"op":"event","session":"s","event":{"offset":1}}`, `{"id":1,"ok":true}`,
		`{"op":"x"}`, `{"op":"a","op":"b"}`, `{"Op":"x"}`, `{"op":""}`, `{"op":"x"`, `{"op":"x\"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := FrameOp(b)
		var ref struct {
			Op Op `json:"op"`
		}
		if json.Unmarshal(b, &ref) != nil {
			return // a broken frame: its full decoding refuses it whatever FrameOp said
		}
		if opKeys(b) > 1 {
			return // duplicate keys: which one counts is not ours to define
		}
		if err != nil || got != ref.Op {
			t.Fatalf("FrameOp(%q) = %q, %v; encoding/json reads op %q", b, got, err, ref.Op)
		}
	})
}

// opKeys counts the top-level keys of a JSON object that encoding/json
// would take for "op" (it matches keys without regard to case).
func opKeys(b []byte) int {
	d := json.NewDecoder(bytes.NewReader(b))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return 0
	}
	n := 0
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return n
		}
		if k, ok := tok.(string); ok && strings.EqualFold(k, "op") {
			n++
		}
		var skip json.RawMessage
		if d.Decode(&skip) != nil {
			return n
		}
	}
	return n
}

// FuzzDecodeFrame feeds DecodeFrame any bytes: it never panics, and a frame
// it accepts has the one field its op names.
func FuzzDecodeFrame(f *testing.F) {
	for _, s := range []string{
		`{"op":"event","session":"s","event":{"offset":1,"type":"message"}}`, `{"id":1,"ok":true,"subs":[{"session":"s"}]}`,
		`{"op":"status","phase":"idle","viewers":2}`, `{"op":"presence","viewers":[{"conn":"c","role":"bot"}]}`,
		`{"op":"turn","messages":[{"role":"user"}]}`, `{"op":"event"}`, `{"op":"new_push"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := DecodeFrame(b)
		if err != nil {
			return
		}
		set := map[Op]bool{
			"": fr.Reply != nil, PushEvent: fr.Event != nil, PushReset: fr.Reset != nil,
			PushPartial: fr.Text != nil, PushDelta: fr.Text != nil, PushStatus: fr.Status != nil,
			PushPresence: fr.Presence != nil, PushBye: fr.Bye != nil, PushTurn: fr.Turn != nil,
		}
		if ok, known := set[fr.Op]; known && !ok {
			t.Fatalf("DecodeFrame(%q): op %q without its push: %+v", b, fr.Op, fr)
		}
	})
}

func TestFrameUnmarshalJSONDecodesByOp(t *testing.T) {
	var f Frame
	if err := json.Unmarshal([]byte(`{"op":"delta","session":"s","turn_id":"t","text":"hi"}`), &f); err != nil {
		t.Fatal(err)
	}
	if f.Op != PushDelta || f.Session != "s" || f.Text == nil || f.Text.Text != "hi" || f.Text.TurnID != "t" {
		t.Fatalf("decoded %+v", f)
	}
	if err := json.Unmarshal([]byte(`{"op":"event","session":"s"}`), &f); err == nil {
		t.Fatalf("an event push without its event was accepted")
	}
}
