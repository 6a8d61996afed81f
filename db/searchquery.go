package db

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A search query as people type it, parsed here rather than handed to the
// store: SQLite's MATCH and PostgreSQL's to_tsquery each have a syntax
// of their own, with errors of their own, and operators (AND, NEAR, :*)
// a person does not mean. The grammar is what search boxes take:
//
//	word        a word, anywhere in the message (any case)
//	"a phrase"  these words, one after the other
//	word*       any word that starts so
//	a OR b      either (OR in capitals)
//	-word       not this word (or -"a phrase"); a query needs something it does want
//
// Words are runs of letters and digits, as both stores split text: what
// else a word holds (foo-bar, it's) splits it into a phrase.

// MaxQueryBytes and MaxQueryTerms bound a query.
const (
	MaxQueryBytes = 256
	MaxQueryTerms = 16
)

// ErrQuery is the class of a query's errors: the caller's, never the store's.
var ErrQuery = errors.New("search query")

// Query is a parsed search: every group must match (AND), a group when one
// of its terms does (OR), and no term of Not may.
type Query struct {
	All [][]Term
	Not []Term
}

// Term is one word or phrase: its words, lower-cased, and whether its
// last word is a prefix.
type Term struct {
	Words  []string
	Prefix bool
}

func queryErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrQuery, fmt.Sprintf(format, a...))
}

// ParseQuery parses q, or says what is wrong with it (errors.Is ErrQuery).
func ParseQuery(q string) (Query, error) {
	var out Query
	if !utf8.ValidString(q) {
		return out, queryErr("not UTF-8")
	}
	if len(q) > MaxQueryBytes {
		return out, queryErr("longer than %d bytes", MaxQueryBytes)
	}
	orNext, terms := false, 0
	for rest := strings.TrimSpace(q); rest != ""; rest = strings.TrimLeftFunc(rest, unicode.IsSpace) {
		neg := false
		if rest[0] == '-' && len(rest) > 1 && !unicode.IsSpace(rune(rest[1])) {
			neg, rest = true, rest[1:]
		}
		var raw string
		quoted := rest[0] == '"'
		if quoted {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				return Query{}, queryErr("a quote is not closed")
			}
			raw, rest = rest[1:1+end], rest[2+end:]
		} else {
			end := strings.IndexFunc(rest, unicode.IsSpace)
			if end < 0 {
				end = len(rest)
			}
			raw, rest = rest[:end], rest[end:]
		}
		if !quoted && !neg && raw == "OR" {
			if len(out.All) == 0 || orNext {
				return Query{}, queryErr("OR needs a word on each side")
			}
			orNext = true
			continue
		}
		t := Term{Prefix: !quoted && strings.HasSuffix(raw, "*")}
		t.Words = strings.FieldsFunc(strings.ToLower(strings.TrimRight(raw, "*")), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r)
		})
		if len(t.Words) == 0 {
			if orNext || neg {
				return Query{}, queryErr("%q has no word to search for", raw)
			}
			continue // punctuation alone: nothing to look for
		}
		if terms++; terms > MaxQueryTerms {
			return Query{}, queryErr("more than %d words or phrases", MaxQueryTerms)
		}
		switch {
		case neg:
			if orNext {
				return Query{}, queryErr("OR before -%s", raw)
			}
			out.Not = append(out.Not, t)
		case orNext:
			last := &out.All[len(out.All)-1]
			*last = append(*last, t)
			orNext = false
		default:
			out.All = append(out.All, []Term{t})
		}
	}
	if orNext {
		return Query{}, queryErr("OR needs a word on each side")
	}
	if len(out.All) == 0 {
		if len(out.Not) > 0 {
			return Query{}, queryErr("only words to leave out: say what to look for too")
		}
		return Query{}, queryErr("nothing to search for")
	}
	return out, nil
}

// MatchFTS is q in SQLite's FTS4 MATCH syntax (the enhanced one, which
// mattn/go-sqlite3 builds): each term quoted, so that no word of it is an
// operator.
func (q Query) MatchFTS() string {
	var b strings.Builder
	term := func(t Term) {
		b.WriteByte('"')
		b.WriteString(strings.Join(t.Words, " "))
		if t.Prefix {
			b.WriteByte('*')
		}
		b.WriteByte('"')
	}
	for i, g := range q.All {
		if i > 0 {
			b.WriteByte(' ')
		}
		if len(g) > 1 {
			b.WriteByte('(')
		}
		for j, t := range g {
			if j > 0 {
				b.WriteString(" OR ")
			}
			term(t)
		}
		if len(g) > 1 {
			b.WriteByte(')')
		}
	}
	for _, t := range q.Not {
		b.WriteString(" NOT ")
		term(t)
	}
	return b.String()
}

// TSQuery is q in PostgreSQL's to_tsquery syntax, for the 'simple'
// configuration: each word a quoted lexeme, a phrase's words joined by
// <->, a prefix marked :*.
func (q Query) TSQuery() string {
	term := func(t Term) string {
		ws := make([]string, len(t.Words))
		for i, w := range t.Words {
			ws[i] = "'" + w + "'"
		}
		if t.Prefix {
			ws[len(ws)-1] += ":*"
		}
		if len(ws) == 1 {
			return ws[0]
		}
		return "(" + strings.Join(ws, " <-> ") + ")"
	}
	var parts []string
	for _, g := range q.All {
		alts := make([]string, len(g))
		for i, t := range g {
			alts[i] = term(t)
		}
		parts = append(parts, "("+strings.Join(alts, " | ")+")")
	}
	for _, t := range q.Not {
		parts = append(parts, "!"+term(t))
	}
	return strings.Join(parts, " & ")
}
