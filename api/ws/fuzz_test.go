package ws

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"unsafe"

	"albedo/wire"
)

// FuzzDecodeCommand: any frame decodes to a command with a positive id and
// an op, or to a bad_request whose id is the frame's own (when it had a
// usable one) or 0; never a panic.
func FuzzDecodeCommand(f *testing.F) {
	for _, s := range []string{`{"id":1,"op":"ping"}`, `{"id":2,"op":"sub","session":"s","after":3,"epoch":"e","window":10}`,
		`{"id":3,"op":"hello","subs":[{"session":"a"}]}`, `{"id":-1,"op":"x"}`, `{"id":1.5}`, `{"id":4,"op":5}`, `[]`, `nul`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cmd, werr := decodeCommand(b)
		if werr == nil {
			if cmd.ID <= 0 || cmd.Op == "" {
				t.Fatalf("decodeCommand(%q) accepted %+v", b, cmd)
			}
			return
		}
		if werr.Code != wire.CodeBadRequest || werr.Message == "" || cmd.ID < 0 {
			t.Fatalf("decodeCommand(%q): %+v, id %d", b, werr, cmd.ID)
		}
	})
}

// FuzzSplitFrames: splitting a message loses no byte but white space
// between frames, and every frame is one JSON value or the unreadable rest
// of its line.
func FuzzSplitFrames(f *testing.F) {
	for _, s := range []string{`{"id":1,"op":"ping"}` + "\n" + `{"id":2,"op":"ping"}`, `{"id":1,"op":"ping"}{"id":2,"op":"ping"}`,
		`{"id":1} {"id":2} garbage`, "\n\n", `{"a":"x y"}  [1, 2]`, `{"id":1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		frames := splitFrames(msg)
		// The frames stand in msg in order, with only white space (as
		// bytes.TrimSpace sees it) around and between them. A frame is a
		// slice of msg: where it stands is where its bytes are (searching
		// for them could find them inside a multi-byte rune).
		pos := 0
		base := uintptr(unsafe.Pointer(unsafe.SliceData(msg)))
		for _, fr := range frames {
			at := int(uintptr(unsafe.Pointer(unsafe.SliceData(fr))) - base)
			if len(fr) == 0 || at < pos || len(bytes.TrimSpace(msg[pos:at])) > 0 {
				t.Fatalf("splitFrames(%q) = %q: frame %q lost bytes before it", msg, frames, fr)
			}
			pos = at + len(fr)
		}
		if len(bytes.TrimSpace(msg[pos:])) > 0 {
			t.Fatalf("splitFrames(%q) = %q: the end lost", msg, frames)
		}
		// Line by line: every frame but a line's last is one JSON value.
		n := 0
		for line := range bytes.SplitSeq(msg, []byte{'\n'}) {
			fs := splitFrames(line)
			for k, fr := range fs {
				if k < len(fs)-1 && !json.Valid(fr) {
					t.Fatalf("splitFrames(%q): frame %q is not JSON and not the last of its line", line, fr)
				}
			}
			n += len(fs)
		}
		if n != len(frames) {
			t.Fatalf("splitFrames(%q): %d frames, %d line by line", msg, len(frames), n)
		}
	})
}

// FuzzHeaderHello: any value of the upgrade's hello header is one hello
// with a positive id, or a bad_request; never a panic.
func FuzzHeaderHello(f *testing.F) {
	for _, s := range []string{"eyJpZCI6MSwib3AiOiJoZWxsbyJ9", "eyJpZCI6MSwib3AiOiJwaW5nIn0", "e30", "!!", "", "eyJpZCI6MSwib3AiOiJoZWxsbyIsInN1YnMiOlt7InNlc3Npb24iOiJhIn1dfQ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		cmd, werr := headerHello(http.Header{wire.HelloHeader: {v}})
		if werr != nil {
			if werr.Code != wire.CodeBadRequest || werr.Message == "" || cmd != nil {
				t.Fatalf("headerHello(%q): %+v, %+v", v, werr, cmd)
			}
			return
		}
		if cmd == nil || cmd.ID <= 0 || cmd.Op != wire.OpHello || len(v) > wire.MaxHelloHeader {
			t.Fatalf("headerHello(%q) took %+v", v, cmd)
		}
	})
}
