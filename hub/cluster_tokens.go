package hub

import (
	"context"
	"errors"
	"time"

	"albedo/db"
)

// lookupStored is Authenticate for a token this node does not know, in a
// cluster: it may have been made on another node since this one read its
// tokens, so it is looked up in the store. gen is the table's generation
// when Authenticate looked in it.
//
// The lookups hold no lock while they wait for the store, so that a flood
// of made-up tokens neither queues them one behind another nor holds back
// the changes to tokens (tokenTable.ops); what a lookup read is put in the
// table only if the table did not change meanwhile (tokenTable.gen), or
// the lookup is made again. A hash the store did not have is remembered
// (tokenTable.misses).
func (h *Hub) lookupStored(hash string, gen uint64) (Principal, bool) {
	h.stats.tokenLookups.Add(1)
	for range 3 {
		t, err := h.lookupToken(hash)
		if errors.Is(err, db.ErrNotFound) {
			h.tokens.missed(hash)
			return Principal{}, false
		}
		if err != nil {
			return Principal{}, false
		}
		if h.testHookTokenRead != nil {
			h.testHookTokenRead()
		}
		h.tokens.mu.Lock()
		if h.tokens.gen == gen {
			p := h.tokens.principalOf(t)
			h.tokens.putLocked(hash, p)
			h.tokens.mu.Unlock()
			return p, true
		}
		gen = h.tokens.gen
		h.tokens.mu.Unlock()
	}
	// The table kept changing: once more, holding the changes back, as
	// a revocation does (tokenTable.ops).
	h.tokens.ops.Lock()
	defer h.tokens.ops.Unlock()
	t, err := h.lookupToken(hash)
	if err != nil {
		return Principal{}, false
	}
	p := h.tokens.principalOf(t)
	h.tokens.put(hash, p)
	return p, true
}

// lookupToken reads the token of hash from the store.
func (h *Hub) lookupToken(hash string) (db.Token, error) {
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	return h.db.TokenByHash(ctx, hash)
}

// maxMisses bounds tokenTable.misses (64 B a hash and the map's own).
const maxMisses = 4096

// missed remembers that the store has no token of hash (misses).
func (t *tokenTable) missed(hash string) {
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
