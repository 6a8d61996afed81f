package main

import (
	"strings"
	"testing"
)

func TestFitNameMakesAMemberName(t *testing.T) {
	for in, want := range map[string]string{
		"ann": "ann", "Ann.Lee": "ann.lee", "DOMAIN\\bob": "domain-bob", "_svc": "svc",
		"": "owner", "...": "owner", "josé": "jos-", string(make([]byte, 70)): "owner",
	} {
		if got := fitName(in); got != want {
			t.Errorf("fitName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := fitName(strings.Repeat("abc", 30)); len(got) != 64 {
		t.Errorf("a long login name gives %d bytes", len(got))
	}
}
