package main

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"albedo/wire"
)

// stats describes a transcript in a few sentences, each a piece to stream.
// The last message is the question being answered.
func stats(msgs []wire.TurnMessage) []string {
	if len(msgs) == 0 {
		return []string{"There is nothing to count yet."}
	}
	byRole := map[wire.Role]int{}
	words := map[string]int{}
	total := 0
	for _, m := range msgs {
		byRole[m.Role]++
		for _, w := range strings.FieldsFunc(strings.ToLower(m.Text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			total++
			if len([]rune(w)) > 3 {
				words[w]++
			}
		}
	}
	last := msgs[len(msgs)-1]
	out := []string{
		fmt.Sprintf("This conversation has %d message%s (%s), %d words in all. ",
			len(msgs), plural(len(msgs)), roles(byRole), total),
		fmt.Sprintf("Your message has %d words and %d characters. ",
			len(strings.Fields(last.Text)), len([]rune(last.Text))),
	}
	if top := topWords(words, 3); top != "" {
		out = append(out, "Most used words: "+top+".")
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func roles(by map[wire.Role]int) string {
	var parts []string
	for _, r := range []wire.Role{wire.RoleUser, wire.RoleAssistant, wire.RoleBot, wire.RoleSystem} {
		if n := by[r]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, r))
		}
	}
	return strings.Join(parts, ", ")
}

func topWords(words map[string]int, n int) string {
	type kv struct {
		w string
		n int
	}
	var all []kv
	for w, c := range words {
		all = append(all, kv{w, c})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n || all[i].n == all[j].n && all[i].w < all[j].w })
	var parts []string
	for i := 0; i < len(all) && i < n; i++ {
		parts = append(parts, fmt.Sprintf("%q (%d×)", all[i].w, all[i].n))
	}
	return strings.Join(parts, ", ")
}
