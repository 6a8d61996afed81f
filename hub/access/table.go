package access

import (
	"slices"
	"strings"
	"sync"
	"time"

	"albedo/db"
	"albedo/wire"
)

// Table is the in-memory index of stored tokens (owner tokens made by a
// command, members', bots', links'), by hash, and of members' grants
// (grants.go), under the same locks: a check of access reads no store.
type Table struct {
	// ops is read-locked by whoever changes stored tokens (Changing), from
	// before the store write to after the table's update, and locked by
	// whoever must see no change meanwhile (Exclusive): a reload, so that
	// it neither misses a token just made nor brings back one just
	// revoked.
	ops sync.RWMutex

	mu     sync.RWMutex
	byHash map[string]Principal
	// named counts the tokens of bots, owner tokens and members by their
	// name, lower-cased (NameTaken).
	named map[string]int
	// gen counts the changes to the table. A lookup in the store (in a
	// cluster) puts what it read only if none came since it began
	// (AddUnchanged): a revocation or a narrowing that lands meanwhile is
	// not undone.
	gen uint64
	// grants is each member's access to sessions, by member id and
	// session.
	grants Grants
	// misses are hashes the store did not have when looked up, at most
	// maxMisses: a token cannot exist before it is made, and is unknown to
	// anyone until then, so a hash that missed never becomes a token, and
	// its repeats cost no read of the store.
	misses map[string]struct{}
}

// maxMisses bounds Table.misses (64 B a hash and the map's own).
const maxMisses = 4096

// Changing read-locks the table's changes for a change of stored tokens,
// from before its store write to after the table's update; done unlocks.
func (t *Table) Changing() (done func()) {
	t.ops.RLock()
	return t.ops.RUnlock
}

// Exclusive holds every change of stored tokens back until done.
func (t *Table) Exclusive() (done func()) {
	t.ops.Lock()
	return t.ops.Unlock
}

// PrincipalOf is who a stored token acts as: for a member's token, the
// member, as owner when they are an admin.
func (t *Table) PrincipalOf(tok db.Token) Principal {
	p := Principal{Role: tok.Kind, Name: tok.Name, TokenID: tok.ID, Sessions: tok.SessionList(), grants: t}
	if tok.ExpiresAt != "" {
		p.ExpiresAt, _ = time.Parse(time.RFC3339Nano, tok.ExpiresAt)
	}
	if tok.Kind == wire.TokenMember {
		p.MemberID, p.Name, p.Sessions = tok.Member, tok.MemberName, nil
		if tok.Admin {
			p.Role = wire.TokenOwner
		}
	}
	return p
}

// Member is a member as a principal with no token of its own (the
// daemon.json token's): an admin acts as owner.
func (t *Table) Member(name, id string, admin bool) Principal {
	role := wire.TokenMember
	if admin {
		role = wire.TokenOwner
	}
	return Principal{Role: role, Name: name, MemberID: id, grants: t}
}

// Add puts a stored token in the table and returns who it acts as.
func (t *Table) Add(tok db.Token) Principal {
	p := t.PrincipalOf(tok)
	t.mu.Lock()
	t.putLocked(tok.Hash, p)
	t.mu.Unlock()
	return p
}

// AddUnchanged is Add when the table is still at gen (Lookup's); else
// it puts nothing and returns the table's generation now.
func (t *Table) AddUnchanged(tok db.Token, gen uint64) (Principal, uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gen != gen {
		return Principal{}, t.gen, false
	}
	p := t.PrincipalOf(tok)
	t.putLocked(tok.Hash, p)
	return p, t.gen, true
}

func (t *Table) putLocked(hash string, p Principal) {
	if t.byHash == nil {
		t.byHash = map[string]Principal{}
	}
	t.deleteLocked(hash)
	t.byHash[hash] = p
	t.name(p, 1)
	t.gen++
}

// deleteLocked forgets the token of hash, if the table has it.
func (t *Table) deleteLocked(hash string) {
	if p, ok := t.byHash[hash]; ok {
		delete(t.byHash, hash)
		t.name(p, -1)
	}
}

// name counts p's name in named by n, when p is a bot's, an owner
// token's or a member's.
func (t *Table) name(p Principal, n int) {
	if p.Role != wire.TokenBot && p.Role != wire.TokenOwner && p.Role != wire.TokenMember {
		return
	}
	key := strings.ToLower(p.Name)
	if t.named == nil {
		t.named = map[string]int{}
	}
	if t.named[key] += n; t.named[key] <= 0 {
		delete(t.named, key)
	}
}

// NameTaken says whether a bot, an owner token or a member's token goes
// by name, whatever its case.
func (t *Table) NameTaken(name string) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.named[strings.ToLower(name)] > 0
}

// Update sets who a token still in the table acts as; a token dropped
// meanwhile (revoked by a later commit) stays dropped.
func (t *Table) Update(tok db.Token) {
	p := t.PrincipalOf(tok)
	t.mu.Lock()
	if _, ok := t.byHash[tok.Hash]; ok {
		t.putLocked(tok.Hash, p)
	}
	t.gen++
	t.mu.Unlock()
}

// Lookup finds the principal of a token's hash; missed says the store had
// no such token when last asked (Missed), and gen is the table's
// generation, for AddUnchanged.
func (t *Table) Lookup(hash string) (p Principal, ok, missed bool, gen uint64) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	p, ok = t.byHash[hash]
	_, missed = t.misses[hash]
	return p, ok, missed, t.gen
}

// Missed remembers that the store has no token of hash.
func (t *Table) Missed(hash string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.misses == nil {
		t.misses = map[string]struct{}{}
	}
	if len(t.misses) >= maxMisses {
		for h := range t.misses { // any one: they are all as good
			delete(t.misses, h)
			break
		}
	}
	t.misses[hash] = struct{}{}
}

// ByID returns the principal of the token with that id, if it is in the
// table.
func (t *Table) ByID(tokenID string) (Principal, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, q := range t.byHash {
		if q.TokenID == tokenID {
			return q, true
		}
	}
	return Principal{}, false
}

// Any says whether a token's principal matches. match runs with the
// table read-locked: it must not call the table.
func (t *Table) Any(match func(Principal) bool) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, p := range t.byHash {
		if match(p) {
			return true
		}
	}
	return false
}

// Each calls f for every token's principal, with the table read-locked:
// f must not call the table.
func (t *Table) Each(f func(Principal)) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, p := range t.byHash {
		f(p)
	}
}

// Drop forgets the tokens of ids.
func (t *Table) Drop(ids []string) {
	t.mu.Lock()
	for h, p := range t.byHash {
		if slices.Contains(ids, p.TokenID) {
			t.deleteLocked(h)
		}
	}
	t.gen++
	t.mu.Unlock()
}

// DropScoped forgets the tokens scoped to session: it returns the ids of
// those scoped to it alone (revoked with it) and of those scoped to
// others too (narrowed).
func (t *Table) DropScoped(session string) (revoked, narrowed []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for h, p := range t.byHash {
		if p.Sessions == nil || !slices.Contains(p.Sessions, session) {
			continue
		}
		t.deleteLocked(h)
		if len(p.Sessions) == 1 {
			revoked = append(revoked, p.TokenID)
		} else {
			narrowed = append(narrowed, p.TokenID)
		}
	}
	t.gen++
	return revoked, narrowed
}

// Reload makes the tokens what the store holds, toks, and returns the ids
// of those gone and of those whose sessions changed.
func (t *Table) Reload(toks []db.Token) (revoked, narrowed []string) {
	fresh := make(map[string]Principal, len(toks))
	for _, tok := range toks {
		fresh[tok.Hash] = t.PrincipalOf(tok)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for hash, p := range t.byHash {
		switch q, ok := fresh[hash]; {
		case !ok:
			revoked = append(revoked, p.TokenID)
		case !slices.Equal(p.Sessions, q.Sessions):
			narrowed = append(narrowed, p.TokenID)
		}
	}
	t.byHash, t.named = fresh, nil
	for _, p := range fresh {
		t.name(p, 1)
	}
	t.gen++
	return revoked, narrowed
}
