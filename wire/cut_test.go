package wire

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCut holds the cuts to their bounds and to UTF-8: what a valid text
// keeps is valid, a prefix (or for TailUTF8 a suffix) of it, within max,
// and CutNote says so whenever it cut.
func FuzzCut(f *testing.F) {
	f.Add("héllo wörld 日本語 😀", 7)
	f.Add("", 0)
	f.Add("abc", 3)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 1<<20 || !utf8.ValidString(s) {
			return
		}
		c := CutUTF8(s, max)
		if len(c) > max || !strings.HasPrefix(s, c) || !utf8.ValidString(c) || (len(s) <= max && c != s) || len(s) > max && len(c) < max-3 {
			t.Fatalf("CutUTF8(%q, %d) = %q", s, max, c)
		}
		tl := TailUTF8(s, max)
		if len(tl) > max || !strings.HasSuffix(s, tl) || !utf8.ValidString(tl) || len(s) > max && len(tl) < max-3 {
			t.Fatalf("TailUTF8(%q, %d) = %q", s, max, tl)
		}
		n := CutNote(s, max, "text")
		if len(s) > max != strings.Contains(n, "[the text was cut at") || !strings.HasPrefix(n, c) {
			t.Fatalf("CutNote(%q, %d) = %q", s, max, n)
		}
	})
}
