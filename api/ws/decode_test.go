package ws

import (
	"encoding/json"
	"reflect"
	"testing"

	"albedo/wire"
)

// quickFrames are frames quickCommand reads (true) or leaves to
// encoding/json (false).
var quickFrames = []struct {
	frame string
	quick bool
}{
	{`{"id":1,"op":"post","session":"s","input_id":"019ad4a5-3c1b-7e2a-9f10-3a4b5c6d7e8f","text":"hello"}`, true},
	{` { "text" : "a\"b\\c\/d\b\f\n\r\t" , "op":"send", "id": 123456789012345678 } ` + "\n", true},
	{`{"id":7,"op":"ping"}`, true},
	{`{"id":7,"op":"é 日本 😀"}`, true},
	{`{"id":0,"op":"post"}`, false},                         // id 0: json decides (and decodeCommand refuses)
	{`{"id":-1,"op":"post"}`, false},                        // negative
	{`{"id":01,"op":"post"}`, false},                        // leading zero: not JSON
	{`{"id":1234567890123456789,"op":"post"}`, false},       // 19 digits
	{`{"id":1.0,"op":"post"}`, false},                       // fraction
	{`{"id":1e2,"op":"post"}`, false},                       // exponent
	{`{"id":"1","op":"post"}`, false},                       // string id
	{`{"id":1,"op":"post","op":"send"}`, false},             // duplicate key
	{`{"ID":1,"op":"post"}`, false},                         // other case
	{`{"id":1,"op":"post","after":3}`, false},               // another field
	{`{"id":1,"op":"post","text":"\u003c"}`, false},         // \u escape
	{`{"id":1,"op":"post","text":"\x"}`, false},             // not an escape
	{"{\"id\":1,\"op\":\"post\",\"text\":\"\xff\"}", false}, // invalid UTF-8
	{"{\"id\":1,\"op\":\"post\",\"text\":\"a\tb\"}", false}, // raw control character
	{`{"id":1,"op":null}`, false},
	{`{"id":1,"op":"post"} {"id":2}`, false}, // two values
	{`{"id":1,"op":"post",}`, false},
	{`{"id":1,"op":"post"`, false},
	{`{}`, false},
	{`[]`, false},
	{``, false},
}

func TestQuickCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range quickFrames {
		cmd, ok := quickCommand([]byte(tc.frame))
		if ok != tc.quick {
			t.Errorf("quickCommand(%s) says %v, want %v", tc.frame, ok, tc.quick)
		}
		if quickValid([]byte(tc.frame)) != ok {
			t.Errorf("quickValid(%s) differs from quickCommand", tc.frame)
		}
		checkQuick(t, []byte(tc.frame), cmd, ok)
	}
}

// checkQuick holds quickCommand to encoding/json: what it reads is one
// JSON value that json.Unmarshal reads to the same command, without error.
func checkQuick(t *testing.T, f []byte, cmd wire.Command, ok bool) {
	t.Helper()
	if !ok {
		if !reflect.DeepEqual(cmd, wire.Command{}) {
			t.Fatalf("quickCommand(%q) refused but returned %+v", f, cmd)
		}
		return
	}
	var want wire.Command
	if err := json.Unmarshal(f, &want); err != nil {
		t.Fatalf("quickCommand(%q) = %+v; json.Unmarshal fails: %v", f, cmd, err)
	}
	if !json.Valid(f) {
		t.Fatalf("quickCommand(%q) read what json.Valid refuses", f)
	}
	if !reflect.DeepEqual(cmd, want) {
		t.Fatalf("quickCommand(%q)\n got %+v\nwant %+v", f, cmd, want)
	}
}

// FuzzQuickCommand: where quickCommand reads a frame, encoding/json reads
// it to the same command; quickValid agrees with quickCommand.
func FuzzQuickCommand(f *testing.F) {
	for _, tc := range quickFrames {
		f.Add([]byte(tc.frame))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cmd, ok := quickCommand(b)
		if quickValid(b) != ok {
			t.Fatalf("quickValid(%q) differs from quickCommand", b)
		}
		checkQuick(t, b, cmd, ok)
	})
}

func BenchmarkDecodePost(b *testing.B) {
	f := []byte(`{"id":12345,"op":"post","session":"019ad4a5-0000-7000-8000-000000000001","input_id":"019ad4a5-3c1b-7e2a-9f10-3a4b5c6d7e8f","text":"a message of the load tool, about the size of a chat line"}`)
	b.ReportAllocs()
	for b.Loop() {
		fs := splitFrames(f)
		if _, werr := decodeCommand(fs[0]); werr != nil {
			b.Fatal(werr)
		}
	}
}
