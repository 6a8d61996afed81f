package tools

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNames(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"forecast": true, "get_weather-2": true, strings.Repeat("a", 64): true,
		"": false, strings.Repeat("a", 65): false, "Forecast": false, "a.b": false, "a/b": false, "a b": false, "é": false,
	} {
		if ValidName(name) != ok {
			t.Errorf("ValidName(%q) = %v", name, !ok)
		}
	}
	full := FullName(SourceBot, "weather", "forecast")
	if full != "bot:weather/forecast" {
		t.Fatalf("full name %q", full)
	}
	if src, owner, tool, ok := ParseFull(full); !ok || src != SourceBot || owner != "weather" || tool != "forecast" {
		t.Fatalf("ParseFull(%q) = %v %v %v %v", full, src, owner, tool, ok)
	}
	for _, bad := range []string{"weather/forecast", "acp:a/b", "bot:a", "bot:/b", "bot:a/", "bot:A/b", "mcp:a/b/c"} {
		if _, _, _, ok := ParseFull(bad); ok {
			t.Errorf("ParseFull(%q) took it", bad)
		}
	}
}

// The last rule that matches decides; with none, ask. * spans the colon
// and the slash.
func TestPolicy(t *testing.T) {
	t.Parallel()
	p, err := NewPolicy([]Rule{
		{"*", Allow, ""},
		{"bot:*", Ask, ""},
		{"bot:weather/*", Allow, ""},
		{"mcp:fs/write_*", Deny, ""},
		{"mcp:fs/write_?ote", Ask, ""},
		{"mcp:fs/write_*", Allow, "coder"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for full, want := range map[string]Decision{
		"mcp:github/list_issues": Allow,
		"bot:deploy/run":         Ask,
		"bot:weather/forecast":   Allow,
		"mcp:fs/write_file":      Deny,
		"mcp:fs/write_note":      Ask,
	} {
		if got := p.Of(full); got != want {
			t.Errorf("%s: %s, want %s", full, got, want)
		}
	}
	// A rule that names a participant counts for its calls only.
	if got := p.For("Coder").Of("mcp:fs/write_file"); got != Allow {
		t.Errorf("coder's write: %s, want allow", got)
	}
	if got := p.For("other").Of("mcp:fs/write_file"); got != Deny {
		t.Errorf("another participant's write: %s, want deny", got)
	}
	if got := (Policy{}).Of("bot:a/b"); got != Ask {
		t.Errorf("no rules: %s, want ask", got)
	}
	for _, bad := range [][]Rule{{{"", Allow, ""}}, {{"bot:*", "maybe", ""}}, {{"bot:*", AllowSession, ""}}, {{strings.Repeat("*", 257), Allow, ""}}, {{"a\nb", Deny, ""}}} {
		if _, err := NewPolicy(bad); err == nil {
			t.Errorf("NewPolicy(%+v) took it", bad)
		}
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		glob, name string
		want       bool
	}{
		{"", "", true}, {"", "a", false}, {"*", "", true}, {"a*", "a", true},
		{"a*c", "abbbc", true}, {"a*c", "abbbd", false}, {"a?c", "abc", true}, {"a?c", "ac", false},
		{"*/x", "bot:a/x", true}, {"*a*b*c*", "xaybzc", true}, {"*a*b*c*", "xaybz", false},
		{"bot:*/run", "bot:deploy/run", true}, {"bot:*/run", "bot:deploy/run2", false},
	} {
		if got := Match(c.glob, c.name); got != c.want {
			t.Errorf("Match(%q, %q) = %v", c.glob, c.name, got)
		}
	}
	// Many stars against a long name that does not match: bounded work.
	glob, name := strings.Repeat("*a", 100)+"b", strings.Repeat("a", 10000)
	began := time.Now()
	if Match(glob, name) {
		t.Fatal("matched")
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("a pathological glob took %v", d)
	}
}

// What a source declares is checked whole, and the error names the tool.
func TestCheckSpecs(t *testing.T) {
	t.Parallel()
	ok := []Spec{
		{Name: "forecast", Description: "the weather", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
		{Name: "now", InputSchema: json.RawMessage(` {} `)},
	}
	if err := CheckSpecs(ok); err != nil {
		t.Fatal(err)
	}
	many := make([]Spec, MaxTools+1)
	for i := range many {
		many[i] = Spec{Name: "t" + strconv.Itoa(i), InputSchema: json.RawMessage(`{}`)}
	}
	for name, c := range map[string]struct {
		specs []Spec
		says  string
	}{
		"a bad name":         {[]Spec{{Name: "Forecast", InputSchema: json.RawMessage(`{}`)}}, `name "Forecast"`},
		"twice":              {[]Spec{ok[0], ok[0]}, "declared twice"},
		"a long description": {[]Spec{{Name: "a", Description: strings.Repeat("d", MaxDescriptionBytes+1), InputSchema: json.RawMessage(`{}`)}}, "the limit is 4096"},
		"a NUL":              {[]Spec{{Name: "a", Description: "a\x00b", InputSchema: json.RawMessage(`{}`)}}, "not UTF-8 text"},
		"no schema":          {[]Spec{{Name: "a"}}, "not a JSON object"},
		"an array schema":    {[]Spec{{Name: "a", InputSchema: json.RawMessage(`[]`)}}, "not a JSON object"},
		"a string type":      {[]Spec{{Name: "a", InputSchema: json.RawMessage(`{"type":"string"}`)}}, `type "string"`},
		"a broken schema":    {[]Spec{{Name: "a", InputSchema: json.RawMessage(`{"type":`)}}, "not a JSON object"},
		"a huge schema":      {[]Spec{{Name: "a", InputSchema: json.RawMessage(`{"d":"` + strings.Repeat("x", MaxSchemaBytes) + `"}`)}}, "the limit is 65536"},
		"too many":           {many, "the limit is 128"},
	} {
		err := CheckSpecs(c.specs)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want it to say %q", name, err, c.says)
		}
	}
}
