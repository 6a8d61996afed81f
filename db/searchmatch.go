package db

import (
	"strings"
	"unicode"
)

// Matching a query in Go, as the index would, for the messages SQLite's
// log holds until their fold (search.go): the same words (runs of
// letters and digits, lower-cased, accents kept), phrases as words one
// after the other, a prefix as a word that starts so.

// words splits text as the index does, with each word's place in text.
func words(text string) (ws []string, at [][2]int) {
	start := -1
	for i, r := range text {
		in := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			ws, at = append(ws, strings.ToLower(text[start:i])), append(at, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		ws, at = append(ws, strings.ToLower(text[start:])), append(at, [2]int{start, len(text)})
	}
	return ws, at
}

// find returns the index in ws of each place t starts.
func (t Term) find(ws []string) []int {
	var out []int
	for i := 0; i+len(t.Words) <= len(ws); i++ {
		ok := true
		for j, w := range t.Words {
			last := j == len(t.Words)-1
			if ws[i+j] != w && !(last && t.Prefix && strings.HasPrefix(ws[i+j], w)) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, i)
		}
	}
	return out
}

// Matches says whether text holds what q asks for.
func (q Query) Matches(text string) bool {
	ws, _ := words(text)
	for _, g := range q.All {
		if !anyTerm(g, func(t Term) bool { return len(t.find(ws)) > 0 }) {
			return false
		}
	}
	for _, t := range q.Not {
		if len(t.find(ws)) > 0 {
			return false
		}
	}
	return true
}

func anyTerm(ts []Term, f func(Term) bool) bool {
	for _, t := range ts {
		if f(t) {
			return true
		}
	}
	return false
}

// snippetWords is how many words a snippet shows around its first match.
const snippetWords = 24

// Snippet is the words of text around its first match, each match between
// MatchStart and MatchEnd, "…" where text was cut: as FTS4's snippet().
func (q Query) Snippet(text string) string {
	ws, at := words(text)
	marked := make([]bool, len(ws))
	first := -1
	for _, g := range q.All {
		for _, t := range g {
			for _, i := range t.find(ws) {
				for j := range t.Words {
					marked[i+j] = true
				}
				if first < 0 || i < first {
					first = i
				}
			}
		}
	}
	if first < 0 {
		first = 0
	}
	from := max(first-snippetWords/4, 0)
	to := min(from+snippetWords, len(ws))
	var b strings.Builder
	if from > 0 {
		b.WriteString("…")
	}
	start := 0
	if from > 0 {
		start = at[from][0]
	}
	end := len(text)
	if to < len(ws) {
		end = at[to-1][1]
	}
	pos := start
	for i := from; i < to; i++ {
		b.WriteString(text[pos:at[i][0]])
		if marked[i] {
			b.WriteString(MatchStart + text[at[i][0]:at[i][1]] + MatchEnd)
		} else {
			b.WriteString(text[at[i][0]:at[i][1]])
		}
		pos = at[i][1]
	}
	b.WriteString(text[pos:end])
	if end < len(text) {
		b.WriteString("…")
	}
	return b.String()
}
