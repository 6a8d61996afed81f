package access

import (
	"strings"

	"albedo/wire"
)

// The rule for text (docs/protocol.md, "Text"): every text field is
// stored as given, except that none may hold U+0000. bun writes strings
// into its SQL, where a NUL ends them, and C strings end there everywhere
// else; a field that cannot be kept faithfully is refused at the edge, with
// its name, rather than failing in the store as a 500.

// CanonicalUUID says whether id is a UUID written the one way albedo
// accepts: 36 characters, lower-case hex, 8-4-4-4-12. uuid.Validate also
// takes upper case, braces and urn:uuid:, and one input written two ways
// must not be two inputs. It reads the characters in place: parsing and
// writing the UUID again, as uuid.Parse and String would, cost every
// input a string on the heap.
func CanonicalUUID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := range len(id) {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// fieldLimits are the byte limits of the text fields CheckText knows by
// name; a field not named here (text, error) is bounded where it is read.
var fieldLimits = map[string]int{
	"title":     wire.MaxTitleBytes,
	"workspace": wire.MaxWorkspaceBytes,
	"model":     wire.MaxModelBytes,
	"provider":  wire.MaxNameBytes,
	"effort":    wire.MaxNameBytes,
	"system":    wire.MaxSystemBytes,
	"author":    wire.MaxNameBytes,
	"author_id": wire.MaxNameBytes,
	"turn_id":   wire.MaxNameBytes,
	"input_id":  wire.MaxNameBytes,
	"state":     wire.MaxNameBytes,
	"reason":    wire.MaxNameBytes,
	"by":        wire.MaxNameBytes,
}

// CheckText refuses a text field that holds U+0000, or that is longer
// than its limit (fieldLimits).
func CheckText(field, v string) *wire.Error {
	if limit, ok := fieldLimits[field]; ok && len(v) > limit {
		return wire.Errorf(wire.CodeTooLarge, "%s is %d bytes; the limit is %d", field, len(v), limit)
	}
	if strings.IndexByte(v, 0) >= 0 {
		return wire.Errorf(wire.CodeBadRequest, "%s must not contain U+0000 (NUL)", field)
	}
	return nil
}

// CheckTexts refuses the first of pairs (name, value, name, value, …) that
// holds U+0000; a nil *string is a field not given.
func CheckTexts(pairs ...any) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		name := pairs[i].(string)
		var v string
		switch x := pairs[i+1].(type) {
		case string:
			v = x
		case *string:
			if x == nil {
				continue
			}
			v = *x
		}
		if werr := CheckText(name, v); werr != nil {
			return werr
		}
	}
	return nil
}

// CheckEffort refuses an effort that is not one of wire.Efforts: a typo
// would otherwise be stored, and fail every turn of the session at the
// provider instead of here.
func CheckEffort(e *string) *wire.Error {
	if e != nil && !wire.ValidEffort(*e) {
		return wire.Errorf(wire.CodeBadRequest, "effort %q is not one of %s (or empty, for none set)", *e, strings.Join(wire.Efforts, ", "))
	}
	return nil
}
