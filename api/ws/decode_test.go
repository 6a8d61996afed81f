package ws

import (
	"fmt"
	"reflect"
	"testing"
	"unicode/utf8"
)

// decodeFrames are frames of the hot path and their oddities, each of
// which decodeCommand must decide as encoding/json alone does.
var decodeFrames = []string{
	`{"id":1,"op":"post","session":"s","input_id":"019ad4a5-3c1b-7e2a-9f10-3a4b5c6d7e8f","text":"hello"}`,
	` { "text" : "a\"b\\c\/d\b\f\n\r\t" , "op":"send", "id": 123456789012345678 } ` + "\n",
	`{"id":7,"op":"ping"}`,
	`{"id":7,"op":"é 日本 😀"}`,
	`{"id":0,"op":"post"}`,
	`{"id":-1,"op":"post"}`,
	`{"id":01,"op":"post"}`,
	`{"id":1234567890123456789,"op":"post"}`,
	`{"id":12345678901234567890,"op":"post"}`,
	`{"id":1.0,"op":"post"}`,
	`{"id":1e2,"op":"post"}`,
	`{"id":"1","op":"post"}`,
	`{"id":1,"op":"post","op":"send"}`,
	`{"ID":1,"OP":"post","Session":"s"}`,
	`{"id":1,"op":"post","after":3}`,
	`{"id":1,"op":"post","text":"\u003c\ud800"}`,
	`{"id":1,"op":"post","text":"\x"}`,
	"{\"id\":1,\"op\":\"post\",\"text\":\"\xff\"}",
	"{\"id\":1,\"op\":\"post\",\"text\":\"a\tb\"}",
	`{"id":1,"op":null}`,
	`{"id":1,"op":"post"} {"id":2}`,
	`{"id":1,"op":"post",}`,
	`{"id":1,"op":"post"`,
	`{"id":2,"op":"sub","session":"s","after":3,"epoch":"e","window":10,"watch":false}`,
	`{"id":3,"op":"hello","subs":[{"session":"a"}]}`,
	`{"id":4,"op":5}`,
	`{}`,
	`[]`,
	`nul`,
	``,
}

// checkDecode holds decodeCommand to encoding/json: the same command, the
// same error in the same words.
func checkDecode(t *testing.T, f []byte) {
	t.Helper()
	cmd, werr := decodeCommand(f)
	want, wantErr := decodeCommandStd(f)
	if !reflect.DeepEqual(cmd, want) || !reflect.DeepEqual(werr, wantErr) {
		t.Fatalf("decodeCommand(%q)\n got %+v, %v\nwant %+v, %v", f, cmd, werr, want, wantErr)
	}
}

func TestDecodeCommandIsEncodingJSONs(t *testing.T) {
	for _, f := range decodeFrames {
		checkDecode(t, []byte(f))
	}
}

// FuzzDecodeCommandIsEncodingJSONs: whatever the frame, decodeCommand
// (go-json-experiment's v1, then encoding/json for what it refuses) decides as
// encoding/json alone does.
func FuzzDecodeCommandIsEncodingJSONs(f *testing.F) {
	for _, s := range decodeFrames {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkDecode(t, b) })
}

// BenchmarkDecodePost is the reader's work on one post: with the check
// that a text message is UTF-8 (readLoop), and without it, to weigh it.
func BenchmarkDecodePost(b *testing.B) {
	f := []byte(`{"id":12345,"op":"post","session":"019ad4a5-0000-7000-8000-000000000001","input_id":"019ad4a5-3c1b-7e2a-9f10-3a4b5c6d7e8f","text":"a message of the load tool, about the size of a chat line"}`)
	for _, checked := range []bool{false, true} {
		b.Run(fmt.Sprintf("utf8=%v", checked), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if checked && !utf8.Valid(f) {
					b.Fatal("not UTF-8")
				}
				fs := splitFrames(f)
				if _, werr := decodeCommand(fs[0]); werr != nil {
					b.Fatal(werr)
				}
			}
		})
	}
}
