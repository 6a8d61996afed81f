package tools

import (
	"encoding/json"
	"testing"
)

// A model names tools: what ParseFull takes, FullName gives back, and
// Match never loops or panics whatever the glob and the name.
func FuzzParseFull(f *testing.F) {
	for _, s := range []string{"bot:weather/forecast", "mcp:fs/read_file", "bot:a", ":/", "bot:a/b/c"} {
		f.Add(s, "bot:*")
	}
	f.Fuzz(func(t *testing.T, full, glob string) {
		if src, owner, tool, ok := ParseFull(full); ok && FullName(src, owner, tool) != full {
			t.Fatalf("ParseFull(%q) = %s %s %s, which names %q", full, src, owner, tool, FullName(src, owner, tool))
		}
		if len(glob) <= MaxGlobBytes && len(full) <= 4*MaxNameBytes {
			Match(glob, full)
		}
	})
}

// A source's declaration of its tools, as it comes over the wire: checked
// without a panic, and what passes holds only valid, distinct names.
func FuzzCheckSpecs(f *testing.F) {
	f.Add([]byte(`[{"name":"forecast","input_schema":{"type":"object"}}]`))
	f.Add([]byte(`[{"name":"a","input_schema":[]},{"name":"a","input_schema":{}}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var specs []Spec
		if json.Unmarshal(b, &specs) != nil || CheckSpecs(specs) != nil {
			return
		}
		seen := map[string]bool{}
		for _, s := range specs {
			if !ValidName(s.Name) || seen[s.Name] {
				t.Fatalf("CheckSpecs passed %q", s.Name)
			}
			seen[s.Name] = true
		}
	})
}
