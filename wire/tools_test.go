package wire

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzCompactJSON holds CompactJSON to json.Marshal of a RawMessage: the
// form an event keeps a model's arguments in, so that AppendEvent writes
// what json.Marshal would; and nil for what is no JSON value.
func FuzzCompactJSON(f *testing.F) {
	for _, s := range []string{`{ "a" : [1, 2, {"b": "<&>"}] }`, `"\u2028"`, `{"x":1} {"y":2}`, `{`, ``, `  null `, "{\"a\":\"\xff\"}", `1e999`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got := CompactJSON(raw)
		want, err := json.Marshal(json.RawMessage(raw))
		if err != nil || !json.Valid(raw) {
			if got != nil {
				t.Fatalf("CompactJSON(%q) = %q; not one JSON value", raw, got)
			}
			return
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("CompactJSON(%q) = %q; json.Marshal writes %q", raw, got, want)
		}
	})
}
