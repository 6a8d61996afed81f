package term

import (
	"reflect"
	"testing"
)

func TestWrap(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		text  string
		width int
		want  []string
	}{
		{"fits", "hello world", 20, []string{"hello world"}},
		{"at a space", "hello world again", 11, []string{"hello world", "again"}},
		{"long word is cut", "abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"newlines kept", "a\n\nb", 10, []string{"a", "", "b"}},
		{"cjk counts two cells", "日本語のテキスト", 6, []string{"日本語", "のテキ", "スト"}},
		{"cjk never split in half", "日本語", 5, []string{"日本", "語"}},
		{"joined emoji shown as their parts", "👩‍💻👩‍💻👩‍💻", 4, []string{"👩💻", "👩💻", "👩💻"}},
		{"tabs go to stops of four", "a\tbc\td", 20, []string{"a   bc  d"}},
		{"controls shown as pictures", "a\x1b[2Jb\r", 20, []string{"a␛[2Jb␍"}},
		{"mixed", "hi 世界 there", 7, []string{"hi 世界", "there"}},
		{"width one", "ab", 1, []string{"a", "b"}},
		{"a wide cluster after a carried word", " abcde世", 6, []string{"", "abcde", "世"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := wrap(tc.text, tc.width)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("wrap(%q, %d) = %q, want %q", tc.text, tc.width, got, tc.want)
			}
			for _, l := range got {
				if width(l) > tc.width {
					t.Fatalf("line %q is %d cells wide", l, width(l))
				}
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	if got := truncate("hello world", 6); got != "hello…" {
		t.Fatalf("%q", got)
	}
	if got := truncate("日本語", 4); got != "日…" {
		t.Fatalf("%q", got)
	}
	if got := truncate("ok", 5); got != "ok" {
		t.Fatalf("%q", got)
	}
}

// What displayable leaves reaches the terminal: no control character, no
// joiner whose width terminals disagree on, and nothing else changed.
func TestDisplayable(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"plain text":       "plain text",
		"\tx":              "    x",
		"ab\tx":            "ab  x",
		"日\tx":             "日  x",
		"👨‍👩‍👧 family":     "👨👩👧 family",
		"❤️":               "❤",
		"bell\a del\x7f":   "bell␇ del␡",
		"e\u0301 combined": "e\u0301 combined",
	}
	for in, want := range cases {
		if got := displayable(in); got != want {
			t.Errorf("displayable(%q) = %q, want %q", in, got, want)
		}
	}
}
