package tools

import "testing"

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
