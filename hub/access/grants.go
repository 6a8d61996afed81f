package access

import (
	"maps"
	"slices"

	"albedo/wire"
)

// A member who is not an admin sees the sessions they made (access
// creator) and those granted to them (read or write): the grants, kept
// in the Table beside the tokens.

// Grants are members' access by session, by member id: the Table's, and
// what SetGrants is given.
type Grants map[string]map[string]wire.Access

// Add records member's access a to session.
func (g Grants) Add(member, session string, a wire.Access) {
	m := g[member]
	if m == nil {
		m = map[string]wire.Access{}
		g[member] = m
	}
	m[session] = a
}

// SetGrants makes the grants what the store holds, g, which the table
// keeps: the caller gives it up.
func (t *Table) SetGrants(g Grants) {
	t.mu.Lock()
	t.grants = g
	t.gen++
	t.mu.Unlock()
}

// Access is a member's access to session ("" for none).
func (t *Table) Access(member, session string) wire.Access {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.grants[member][session]
}

// SetAccess records a member's access to session ("" for none) and
// returns what it was.
func (t *Table) SetAccess(member, session string, a wire.Access) wire.Access {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := t.grants[member][session]
	if a == "" {
		delete(t.grants[member], session)
	} else {
		if t.grants == nil {
			t.grants = Grants{}
		}
		t.grants.Add(member, session, a)
	}
	t.gen++
	return was
}

// RenameMember gives the tokens of the member id the name name.
func (t *Table) RenameMember(id, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for hash, p := range t.byHash {
		if p.MemberID == id {
			t.name(p, -1)
			p.Name = name
			t.byHash[hash] = p
			t.name(p, 1)
		}
	}
	t.gen++
}

// DropMember forgets a removed member's grants.
func (t *Table) DropMember(member string) {
	t.mu.Lock()
	delete(t.grants, member)
	t.gen++
	t.mu.Unlock()
}

// DropSession forgets every member's access to a deleted session.
func (t *Table) DropSession(session string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, g := range t.grants {
		delete(g, session)
	}
	t.gen++
}

// SessionsOf lists the sessions a member has access to, sorted.
func (t *Table) SessionsOf(member string) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := slices.Sorted(maps.Keys(t.grants[member]))
	if out == nil {
		return []string{} // none, which nil is not (Principal.Sees)
	}
	return out
}
