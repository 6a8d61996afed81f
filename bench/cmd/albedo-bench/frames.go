package main

import (
	"bytes"
	"encoding/json"
)

// eventText is what a viewer reads of an event push.
type eventText struct {
	Session string `json:"session"`
	Event   struct {
		Offset int64  `json:"offset"`
		Text   string `json:"text"`
	} `json:"event"`
}

// eventFields returns an event push's session and text. The tool's viewers
// share one CPU with everything else the tool does, and decoding each push
// with encoding/json costs enough of it at high fan-out that deliveries
// queue behind it inside the tool, and the latency tail measured is then
// the tool's, not the server's. So it reads the two strings in place when
// neither holds an escape, and decodes the push only when one does. It relies on the push's shape: wire.Event is flat, with fixed
// keys, so the first `"text":"` that does not follow a backslash is the
// event's text (inside a string every quote is escaped).
func eventFields(line []byte) (session, text string, ok bool) {
	s, sok := rawString(line, `"session":"`)
	t, tok := rawString(line, `"text":"`)
	if sok && tok {
		return s, t, true
	}
	var e eventText
	if json.Unmarshal(line, &e) != nil {
		return "", "", false
	}
	return e.Session, e.Event.Text, true
}

// rawString returns the string value after the first key in line, when it
// ends before any backslash.
func rawString(line []byte, key string) (string, bool) {
	i := bytes.Index(line, []byte(key))
	if i < 0 || i > 0 && line[i-1] == '\\' {
		return "", false
	}
	v := line[i+len(key):]
	end := bytes.IndexAny(v, `"\`)
	if end < 0 || v[end] != '"' {
		return "", false
	}
	return string(v[:end]), true
}
