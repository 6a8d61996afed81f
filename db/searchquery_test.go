package db

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// A query parses into words, phrases, prefixes, alternatives and words to
// leave out, rendered for both stores with every word quoted; what a
// person gets wrong is an ErrQuery that says what.
func TestParseQuery(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ q, fts, ts string }{
		{"Hello", `"hello"`, `('hello')`},
		{`deploy "blue green" roll*`, `"deploy" "blue green" "roll*"`, `('deploy') & (('blue' <-> 'green')) & ('roll':*)`},
		{"cats OR dogs -fish", `("cats" OR "dogs") NOT "fish"`, `('cats' | 'dogs') & !'fish'`},
		{"foo-bar AND near", `"foo bar" "and" "near"`, `(('foo' <-> 'bar')) & ('and') & ('near')`},
		{"Grüße 東京", `"grüße" "東京"`, `('grüße') & ('東京')`},
		{`-"not this" that`, `"that" NOT "not this"`, `('that') & !('not' <-> 'this')`},
		{"x ... y", `"x" "y"`, `('x') & ('y')`},
	} {
		q, err := ParseQuery(c.q)
		if err != nil {
			t.Errorf("%q: %v", c.q, err)
			continue
		}
		if got := q.MatchFTS(); got != c.fts {
			t.Errorf("%q as MATCH: %s, want %s", c.q, got, c.fts)
		}
		if got := q.TSQuery(); got != c.ts {
			t.Errorf("%q as tsquery: %s, want %s", c.q, got, c.ts)
		}
	}
	for _, q := range []string{"", "   ", "...", `"open`, "OR x", "x OR", "a OR OR b", "-x", "a OR -b", "*",
		strings.Repeat("w ", MaxQueryTerms+1), strings.Repeat("x", MaxQueryBytes+1), "\xff"} {
		if _, err := ParseQuery(q); !errors.Is(err, ErrQuery) {
			t.Errorf("%q: %v, want an ErrQuery", q, err)
		}
	}
}

// Whatever is typed, a query either fails as the caller's error or renders
// into MATCH and tsquery text that quotes every word: no quote, operator
// or control character of the input reaches the store unquoted.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"hello", `"a b" c*`, "a OR b -c", `"`, "-", "OR", "x:* & y", "a'b", "NEAR/3", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuery(s)
		if err != nil {
			if !errors.Is(err, ErrQuery) {
				t.Fatalf("%q: %v is not an ErrQuery", s, err)
			}
			return
		}
		if len(q.All) == 0 {
			t.Fatalf("%q parsed with nothing to match", s)
		}
		for _, g := range append(q.All, q.Not) {
			for _, term := range g {
				for _, w := range term.Words {
					if w == "" || !utf8.ValidString(w) || strings.ContainsAny(w, "\"'*:&|!()<>- \t\n\x00") {
						t.Fatalf("%q: word %q", s, w)
					}
				}
			}
		}
		if strings.Count(q.MatchFTS(), `"`)%2 != 0 || strings.Count(q.TSQuery(), "'")%2 != 0 {
			t.Fatalf("%q renders unbalanced: %s / %s", s, q.MatchFTS(), q.TSQuery())
		}
	})
}
