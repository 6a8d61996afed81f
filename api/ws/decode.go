package ws

import (
	"unicode/utf8"

	"albedo/wire"
)

// quickCommand reads the frames of the hot path, send and post as clients
// write them, without reflection: one object whose keys are only "id",
// "op", "session", "input_id" and "text", each at most once, spelled
// exactly so; an id of 1 to 18 digits; strings with no \u escape and valid
// UTF-8; JSON white space anywhere between tokens. Anything else, valid or
// not, makes it say false, and decodeCommand then asks encoding/json,
// which decides as before. So where it says true, json.Unmarshal would
// have given the same command without error (FuzzQuickCommand holds it
// to that), and every error, refusal and oddity is still encoding/json's.
func quickCommand(f []byte) (wire.Command, bool) {
	var cmd wire.Command
	if !quickScan(f, &cmd) {
		return wire.Command{}, false
	}
	return cmd, true
}

// quickValid says whether quickCommand would read f (so f is one JSON
// value), without making its strings.
func quickValid(f []byte) bool { return quickScan(f, nil) }

// quickScan is quickCommand, storing into cmd unless it is nil.
func quickScan(f []byte, cmd *wire.Command) bool {
	const (
		seenID = 1 << iota
		seenOp
		seenSession
		seenInputID
		seenText
	)
	var seen int
	i := skipSpace(f, 0)
	if i >= len(f) || f[i] != '{' {
		return false
	}
	i = skipSpace(f, i+1)
	for {
		key, _, j, ok := quickString(f, i)
		if !ok {
			return false
		}
		i = skipSpace(f, j)
		if i >= len(f) || f[i] != ':' {
			return false
		}
		i = skipSpace(f, i+1)
		var bit int
		switch string(key) {
		case "id":
			bit = seenID
		case "op":
			bit = seenOp
		case "session":
			bit = seenSession
		case "input_id":
			bit = seenInputID
		case "text":
			bit = seenText
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		switch bit {
		case seenID:
			start := i
			for i < len(f) && '0' <= f[i] && f[i] <= '9' {
				i++
			}
			n := i - start
			if n == 0 || n > 18 || f[start] == '0' {
				return false
			}
			var id int64
			for _, c := range f[start:i] {
				id = id*10 + int64(c-'0')
			}
			if cmd != nil {
				cmd.ID = id
			}
		default:
			raw, escaped, j, ok := quickString(f, i)
			if !ok {
				return false
			}
			i = j
			if cmd == nil {
				break
			}
			if bit == seenOp && !escaped {
				cmd.Op = knownOp(raw)
				break
			}
			s := unescape(raw, escaped)
			switch bit {
			case seenOp:
				cmd.Op = wire.Op(s)
			case seenSession:
				cmd.Session = s
			case seenInputID:
				cmd.InputID = s
			case seenText:
				cmd.Text = s
			}
		}
		i = skipSpace(f, i)
		if i >= len(f) {
			return false
		}
		switch f[i] {
		case ',':
			i = skipSpace(f, i+1)
		case '}':
			if skipSpace(f, i+1) != len(f) {
				return false
			}
			return true
		default:
			return false
		}
	}
}

// knownOp returns op as a wire.Op, without a copy for the ops of the
// hot path.
func knownOp(op []byte) wire.Op {
	switch string(op) {
	case string(wire.OpPost):
		return wire.OpPost
	case string(wire.OpSend):
		return wire.OpSend
	}
	return wire.Op(op)
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(f []byte, i int) int {
	for i < len(f) && (f[i] == ' ' || f[i] == '\t' || f[i] == '\n' || f[i] == '\r') {
		i++
	}
	return i
}

// quickString reads the JSON string that starts at f[i]: the bytes between
// its quotes, whether they hold an escape, and the index after its closing
// quote. It says false for a \u escape, invalid UTF-8, a control character
// or a missing quote.
func quickString(f []byte, i int) (raw []byte, escaped bool, next int, ok bool) {
	if i >= len(f) || f[i] != '"' {
		return nil, false, 0, false
	}
	i++
	start := i
	ascii := true
	for ; i < len(f); i++ {
		c := f[i]
		if plainASCII[c] {
			continue
		}
		switch {
		case c == '"':
			raw = f[start:i]
			if !ascii && !utf8.Valid(raw) {
				return nil, false, 0, false
			}
			return raw, escaped, i + 1, true
		case c == '\\':
			if i+1 >= len(f) {
				return nil, false, 0, false
			}
			switch f[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			default:
				return nil, false, 0, false // \u, or not an escape
			}
			escaped = true
			i++
		case c < ' ':
			return nil, false, 0, false
		default: // ≥ 0x80: checked as UTF-8 at the end
			ascii = false
		}
	}
	return nil, false, 0, false
}

// plainASCII holds the bytes a JSON string holds as themselves: ASCII
// from the space up, but the quote and the backslash.
var plainASCII = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// unescape returns a string quickString read, resolving the simple escapes
// it allows.
func unescape(raw []byte, escaped bool) string {
	if !escaped {
		return string(raw)
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		default: // " \ /
			c = raw[i]
		}
		out = append(out, c)
	}
	return string(out)
}
