package wire

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// The hot frames of the write path, encoded by hand: an event of the log
// (every input stores one), the reply that carries a receipt (every
// send and post gets one) and a session's status push (every viewer
// gets one at each change). Each produces exactly the bytes json.Marshal
// (Encode) produces for the same value, HTML escaping included; the fuzz
// targets in append_test.go hold them to it. A change to Event, Reply,
// Receipt or StatusPush must be made here too, or those tests fail.

// AppendEvent appends the JSON of ev to dst, the bytes Encode(ev) returns.
// An At that Encode refuses (a year outside 0–9999, a zone offset of a day
// or more) panics as Encode does.
func AppendEvent(dst []byte, ev *Event) []byte {
	n0 := len(dst)
	dst = append(dst, `{"offset":`...)
	dst = strconv.AppendInt(dst, ev.Offset, 10)
	dst = append(dst, `,"type":`...)
	dst = appendString(dst, string(ev.Type))
	dst = append(dst, `,"at":`...)
	var ok bool
	if dst, ok = appendTime(dst, ev.At); !ok {
		// A copy: passing ev itself would move every caller's event to
		// the heap, for a path that only panics.
		return append(dst[:n0], Encode(*ev)...) // panics, with encoding/json's error
	}
	dst = appendOmitEmpty(dst, `,"role":`, string(ev.Role))
	dst = appendOmitEmpty(dst, `,"author":`, ev.Author)
	dst = appendOmitEmpty(dst, `,"author_id":`, ev.AuthorID)
	dst = appendOmitEmpty(dst, `,"text":`, ev.Text)
	dst = appendOmitEmpty(dst, `,"input_id":`, ev.InputID)
	dst = appendOmitEmpty(dst, `,"turn_id":`, ev.TurnID)
	dst = appendOmitEmpty(dst, `,"state":`, ev.State)
	dst = appendOmitEmpty(dst, `,"reason":`, ev.Reason)
	dst = appendOmitEmpty(dst, `,"error":`, ev.Error)
	if len(ev.Usage) > 0 {
		// Compact already (SetUsage encodes it), as json.Marshal writes a
		// RawMessage.
		dst = append(append(dst, `,"usage":`...), ev.Usage...)
	}
	if ev.Context != 0 {
		dst = strconv.AppendInt(append(dst, `,"context":`...), int64(ev.Context), 10)
	}
	if ev.From != 0 {
		dst = strconv.AppendInt(append(dst, `,"from":`...), ev.From, 10)
	}
	if ev.To != 0 {
		dst = strconv.AppendInt(append(dst, `,"to":`...), ev.To, 10)
	}
	dst = appendOmitNil(dst, `,"title":`, ev.Title)
	dst = appendOmitNil(dst, `,"model":`, ev.Model)
	dst = appendOmitNil(dst, `,"effort":`, ev.Effort)
	dst = appendOmitNil(dst, `,"system":`, ev.System)
	dst = appendOmitNil(dst, `,"tools":`, ev.Tools)
	if ev.Participants != nil {
		// A settings event: rare, so encoding/json's own bytes.
		b, _ := json.Marshal(*ev.Participants)
		dst = append(append(dst, `,"participants":`...), b...)
	}
	dst = appendOmitNil(dst, `,"respond":`, ev.Respond)
	if ev.Archived != nil {
		dst = strconv.AppendBool(append(dst, `,"archived":`...), *ev.Archived)
	}
	if ev.Temperature != nil {
		// A settings event: rare, so encoding/json's own float.
		b, _ := json.Marshal(*ev.Temperature)
		dst = append(append(dst, `,"temperature":`...), b...)
	}
	dst = appendOmitEmpty(dst, `,"by":`, ev.By)
	dst = appendOmitEmpty(dst, `,"call_id":`, ev.CallID)
	dst = appendOmitEmpty(dst, `,"tool":`, ev.Tool)
	if len(ev.Arguments) > 0 {
		// Compact and escaped already (CompactJSON), as json.Marshal
		// writes a RawMessage.
		dst = append(append(dst, `,"arguments":`...), ev.Arguments...)
	}
	dst = appendOmitEmpty(dst, `,"policy":`, ev.Policy)
	dst = appendOmitEmpty(dst, `,"decision":`, ev.Decision)
	if len(ev.Locations) > 0 {
		// A coding agent's call: rare, so encoding/json's own bytes.
		b, _ := json.Marshal(ev.Locations)
		dst = append(append(dst, `,"locations":`...), b...)
	}
	dst = appendOmitEmpty(dst, `,"diff":`, ev.Diff)
	if len(ev.Attachments) > 0 {
		b, _ := json.Marshal(ev.Attachments)
		dst = append(append(dst, `,"attachments":`...), b...)
	}
	if ev.Continues != 0 {
		dst = strconv.AppendInt(append(dst, `,"continues":`...), ev.Continues, 10)
	}
	return append(dst, '}')
}

// EventSize is a capacity that AppendEvent fills without growing for
// events whose strings need no escapes: at most a few bytes too many, as
// the stored event keeps it.
func EventSize(ev *Event) int {
	// {"offset":-9223372036854775808,"type":"","at":"2006-01-02T15:04:05.999999999-07:00"}
	n := 10 + 20 + 10 + len(ev.Type) + 6 + 37 + 1
	field := func(key int, s string) {
		if s != "" {
			n += key + 2 + len(s)
		}
	}
	ptr := func(key int, s *string) {
		if s != nil {
			n += key + 2 + len(*s)
		}
	}
	field(len(`,"role":`), string(ev.Role))
	field(len(`,"author":`), ev.Author)
	field(len(`,"author_id":`), ev.AuthorID)
	field(len(`,"text":`), ev.Text)
	field(len(`,"input_id":`), ev.InputID)
	field(len(`,"turn_id":`), ev.TurnID)
	field(len(`,"state":`), ev.State)
	field(len(`,"reason":`), ev.Reason)
	field(len(`,"error":`), ev.Error)
	if len(ev.Usage) > 0 {
		n += len(`,"usage":`) + len(ev.Usage)
	}
	if ev.Context != 0 {
		n += len(`,"context":`) + 20
	}
	if ev.From != 0 || ev.To != 0 {
		n += len(`,"from":,"to":`) + 40
	}
	ptr(len(`,"title":`), ev.Title)
	ptr(len(`,"model":`), ev.Model)
	ptr(len(`,"effort":`), ev.Effort)
	ptr(len(`,"system":`), ev.System)
	ptr(len(`,"tools":`), ev.Tools)
	if ev.Participants != nil {
		n += len(`,"participants":[]`)
		for _, p := range *ev.Participants {
			n += len(p) + 3
		}
	}
	ptr(len(`,"respond":`), ev.Respond)
	if ev.Archived != nil {
		n += len(`,"archived":false`)
	}
	if ev.Temperature != nil {
		n += len(`,"temperature":`) + 24
	}
	field(len(`,"by":`), ev.By)
	field(len(`,"call_id":`), ev.CallID)
	field(len(`,"tool":`), ev.Tool)
	if len(ev.Arguments) > 0 {
		n += len(`,"arguments":`) + len(ev.Arguments)
	}
	field(len(`,"policy":`), ev.Policy)
	field(len(`,"decision":`), ev.Decision)
	for _, l := range ev.Locations {
		n += len(`,"locations":[{"path":"","line":-9223372036854775808}]`) + len(l.Path)
	}
	field(len(`,"diff":`), ev.Diff)
	for _, a := range ev.Attachments {
		n += len(`,"attachments":[{"sha256":"","name":"","mime":"","size":-9223372036854775808}]`) + len(a.SHA256) + len(a.Name) + len(a.MIME)
	}
	if ev.Continues != 0 {
		n += len(`,"continues":-9223372036854775808`)
	}
	return n
}

// AppendReceiptReply appends the JSON of the reply that carries receipt r
// to command id, the bytes Encode(Reply{ID: id, OK: true, Receipt: &r})
// returns.
func AppendReceiptReply(dst []byte, id int64, r *Receipt) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"ok":true,"receipt":{"input_id":`...)
	dst = appendString(dst, r.InputID)
	dst = append(dst, `,"session":`...)
	dst = appendString(dst, r.Session)
	dst = append(dst, `,"state":`...)
	dst = appendString(dst, r.State)
	dst = append(dst, `,"order":`...)
	dst = strconv.AppendInt(dst, r.Order, 10)
	dst = append(dst, `,"delivery":`...)
	dst = appendString(dst, r.Delivery)
	dst = append(dst, `,"turn_id":`...)
	dst = appendString(dst, r.TurnID)
	dst = append(dst, `,"error":`...)
	dst = appendString(dst, r.Error)
	return append(dst, "}}"...)
}

// ReceiptReplySize is a capacity that AppendReceiptReply fills without
// growing when r's strings need no escapes.
func ReceiptReplySize(r *Receipt) int {
	return 160 + len(r.InputID) + len(r.Session) + len(r.State) + len(r.Delivery) + len(r.TurnID) + len(r.Error)
}

// AppendStatusPush appends the JSON of p to dst, the bytes Encode(*p)
// returns. Every viewer of a session gets one whenever its status or its
// viewers change, and a crowd's every cursor one at its subscribe.
func AppendStatusPush(dst []byte, p *StatusPush) []byte {
	dst = append(dst, `{"op":`...)
	dst = appendString(dst, string(p.Op))
	dst = append(dst, `,"session":`...)
	dst = appendString(dst, p.Session)
	dst = append(dst, `,"phase":`...)
	dst = appendString(dst, string(p.Phase))
	dst = append(dst, `,"turn_id":`...)
	dst = appendString(dst, p.TurnID)
	dst = append(dst, `,"queued":`...)
	dst = strconv.AppendInt(dst, int64(p.Queued), 10)
	dst = append(dst, `,"last_turn":`...)
	if p.LastTurn == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendString(dst, *p.LastTurn)
	}
	dst = append(dst, `,"model":`...)
	dst = appendString(dst, p.Model)
	dst = append(dst, `,"effort":`...)
	dst = appendString(dst, p.Effort)
	dst = append(dst, `,"etag":`...)
	dst = appendString(dst, p.ETag)
	dst = append(dst, `,"head":`...)
	dst = strconv.AppendInt(dst, p.Head, 10)
	dst = append(dst, `,"viewers":`...)
	dst = strconv.AppendInt(dst, int64(p.Viewers), 10)
	if p.Pending != 0 {
		dst = strconv.AppendInt(append(dst, `,"pending":`...), int64(p.Pending), 10)
	}
	if p.Agent != nil {
		// Rare (a coding agent's plan and output) and nested: as
		// encoding/json writes it, which is what it writes inside p.
		dst = append(append(dst, `,"agent":`...), Encode(p.Agent)...)
	}
	return append(dst, '}')
}

// StatusPushSize is a capacity that AppendStatusPush fills without
// growing when p's strings need no escapes and it has no Agent.
func StatusPushSize(p *StatusPush) int {
	n := 216 + len(p.Op) + len(p.Session) + len(p.Phase) + len(p.TurnID) + len(p.Model) + len(p.Effort) + len(p.ETag)
	if p.LastTurn != nil {
		n += len(*p.LastTurn)
	}
	return n
}

func appendOmitEmpty(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	return appendString(append(dst, key...), s)
}

func appendOmitNil(dst []byte, key string, s *string) []byte {
	if s == nil {
		return dst
	}
	return appendString(append(dst, key...), *s)
}

// appendTime appends t as time.Time.MarshalJSON does (RFC 3339 with
// nanoseconds, quoted). It says false where MarshalJSON fails.
func appendTime(dst []byte, t time.Time) ([]byte, bool) {
	dst = append(dst, '"')
	n0 := len(dst)
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	// MarshalJSON's checks (time.Time.appendStrictRFC3339).
	if dst[n0+len("9999")] != '-' {
		return dst, false // a year outside 0–9999
	}
	if dst[len(dst)-1] != 'Z' {
		c := dst[len(dst)-len("Z07:00")]
		h := dst[len(dst)-len("07:00"):]
		if ('0' <= c && c <= '9') || 10*(h[0]-'0')+(h[1]-'0') >= 24 {
			return dst, false // a zone offset of 24 hours or more
		}
	}
	return append(dst, '"'), true
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way encoding/json does with
// its default HTML escaping: <, > and & as \u003c…, U+2028 and U+2029
// escaped, invalid UTF-8 as \ufffd.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= ' ' && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
