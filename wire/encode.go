package wire

import (
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
