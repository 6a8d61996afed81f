package main

import (
	"encoding/json"
	"testing"
	"time"
)

// eventFields reads what encoding/json reads, whether it takes the fast
// path (no escape) or decodes.
func TestEventFieldsAgreesWithJSON(t *testing.T) {
	for _, line := range []string{
		`{"op":"event","session":"0193","event":{"offset":7,"type":"message","at":"2026-11-30T23:00:00Z","role":"bot","author":"b","text":"t=1764543600000000000"}}`,
		`{"op":"event","session":"0193","event":{"offset":8,"type":"message","author":"say \"text\":\"x\"","text":"t=1"}}`,
		`{"op":"event","session":"0193","event":{"offset":9,"type":"message","text":"a \"quoted\" line\nand é"}}`,
		`{"op":"event","session":"0193","event":{"offset":10,"type":"turn","state":"started"}}`,
		`{"op":"event","session":"01\u00393","event":{"offset":11,"text":"t=2"}}`,
		`{"op":"event","session":"0193","event":{"offset":12,"a\"text":"wrong","text":"t=3"}}`,
	} {
		var want eventText
		if err := json.Unmarshal([]byte(line), &want); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		s, text, ok := eventFields([]byte(line))
		if !ok || s != want.Session || text != want.Event.Text {
			t.Errorf("%s:\n got %q %q %v\nwant %q %q", line, s, text, ok, want.Session, want.Event.Text)
		}
	}
	if _, _, ok := eventFields([]byte(`{"op":"event","session":"x`)); ok {
		t.Error("a cut push read as an event")
	}
}

func TestUnstamp(t *testing.T) {
	s := stamp()
	ts, ok := unstamp("prefix " + s + " suffix")
	if !ok || time.Since(ts) < 0 || time.Since(ts) > time.Minute {
		t.Fatalf("unstamp(%q) = %v, %v", s, ts, ok)
	}
	for _, bad := range []string{"", "flood", "t=", "t=x1"} {
		if _, ok := unstamp(bad); ok {
			t.Errorf("unstamp(%q) took it", bad)
		}
	}
}
