package main

import (
	"albedo/client"
	"albedo/wire"
)

// shortIDs names each id of ss, and of their parents, by the shortest end
// of it that no other of those ids ends with, and at least the terminal's
// short id (client.ShortID, the last 8 characters): the name a person
// types for a session. ResolveSession takes it: the 8 characters as the
// short id, a longer end as a unique suffix.
func shortIDs(ss []wire.Session) map[string]string {
	var ids []string
	seen := map[string]bool{}
	add := func(id string) {
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, s := range ss {
		add(s.ID)
		if s.Parent != nil {
			add(s.Parent.Session)
		}
	}
	out := make(map[string]string, len(ids))
	pending := ids
	for n := client.ShortIDLen; len(pending) > 0; n++ {
		ends := map[string]int{}
		for _, id := range ids {
			if len(id) >= n {
				ends[id[len(id)-n:]]++
			}
		}
		var next []string
		for _, id := range pending {
			if len(id) <= n || ends[id[len(id)-n:]] == 1 {
				out[id] = id[len(id)-min(n, len(id)):]
			} else {
				next = append(next, id)
			}
		}
		pending = next
	}
	return out
}
