package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Encode returns the JSON of a value of the contract's own types: frames,
// events, replies. These hold strings, numbers, booleans and slices of
// them, which always encode, so an error here is a bug in this package
// (a field of a type encoding/json refuses) and Encode panics rather than
// let every caller decide what a bug means.
func Encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("wire: encode %T: %v", v, err))
	}
	return b
}

// CompactJSON returns raw as json.Marshal writes a json.RawMessage: compact,
// with <, >, & and U+2028/9 escaped; nil when raw is not one JSON value.
// What an event carries as raw JSON (a tool call's arguments) is kept in
// this form, so that the event encodes to the same bytes either way.
func CompactJSON(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return nil
	}
	var out bytes.Buffer
	json.HTMLEscape(&out, b.Bytes())
	return out.Bytes()
}
