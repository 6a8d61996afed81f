package wire

import (
	"fmt"
	"unicode/utf8"
)

// Texts bounded where they are kept (a tool's output, an agent's words,
// a reply's text): cut on a character's boundary, so that what is kept
// is UTF-8 when what was given was.

// CutUTF8 is s cut to at most max bytes, not inside a character.
func CutUTF8(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// CutNote is s cut as CutUTF8 cuts it, saying what was cut: "[the WHAT
// was cut at N of its M bytes]" on a line of its own.
func CutNote(s string, max int, what string) string {
	if len(s) <= max {
		return s
	}
	c := CutUTF8(s, max)
	return c + fmt.Sprintf("\n[the %s was cut at %d of its %d bytes]", what, len(c), len(s))
}

// TailUTF8 is the newest max bytes of s, from a character's start.
func TailUTF8(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := len(s) - max
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
