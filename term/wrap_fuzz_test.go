package term

import (
	"strings"
	"testing"

	"github.com/rivo/uniseg"
)

// FuzzWrap: every line fits its width (a single grapheme wider than the
// width alone on its line, with only zero-width ones beside it), holds no
// control character, and nothing of the text as displayable shows it but
// spaces at the breaks is lost.
func FuzzWrap(f *testing.F) {
	for _, s := range []string{"hello world", "", "a\nb", "日本語のテキスト", "👩‍👩‍👧 family", strings.Repeat("x", 50), "  lead and trail  "} {
		f.Add(s, 7)
	}
	f.Fuzz(func(t *testing.T, s string, w int) {
		w = w%200 + 1
		if w < 1 {
			w = -w + 1
		}
		lines := wrap(s, w)
		for _, l := range lines {
			if lw := width(l); lw > w && visibleClusters(l) > 1 {
				t.Fatalf("wrap(%q, %d): line %q is %d cells", s, w, l, lw)
			}
		}
		for _, l := range lines {
			if strings.ContainsFunc(l, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Fatalf("wrap(%q, %d): line %q holds a control character", s, w, l)
			}
		}
		var shown []string
		for para := range strings.SplitSeq(s, "\n") {
			shown = append(shown, displayable(para))
		}
		squash := func(x string) string { return strings.Join(strings.Fields(x), "") }
		if got := squash(strings.Join(lines, "\n")); got != squash(strings.Join(shown, "\n")) {
			t.Fatalf("wrap(%q, %d) lost text: %q", s, w, lines)
		}
	})
}

// visibleClusters counts the grapheme clusters of s that take cells.
func visibleClusters(s string) int {
	n := 0
	g := uniseg.NewGraphemes(s)
	for g.Next() {
		if g.Width() > 0 {
			n++
		}
	}
	return n
}
