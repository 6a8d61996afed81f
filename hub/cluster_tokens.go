package hub

import (
	"context"
	"errors"
	"time"

	"albedo/db"
	"albedo/hub/access"
)

// lookupStored is Authenticate for a token this node does not know, in a
// cluster: it may have been made on another node since this one read its
// tokens, so it is looked up in the store. gen is the table's generation
// when Authenticate looked in it.
//
// The lookups hold no lock while they wait for the store, so that a flood
// of made-up tokens neither queues them one behind another nor holds back
// the changes to tokens (access.Table.Exclusive); what a lookup read is put in the
// table only if the table did not change meanwhile (access.Table.AddUnchanged), or
// the lookup is made again. A hash the store did not have is remembered
// (access.Table.Missed).
func (h *Hub) lookupStored(hash string, gen uint64) (access.Principal, bool) {
	h.stats.tokenLookups.Add(1)
	for range 3 {
		t, err := h.lookupToken(hash)
		if errors.Is(err, db.ErrNotFound) {
			h.tokens.Missed(hash)
			return access.Principal{}, false
		}
		if err != nil {
			return access.Principal{}, false
		}
		if h.testHookTokenRead != nil {
			h.testHookTokenRead()
		}
		p, now, ok := h.tokens.AddUnchanged(t, gen)
		if ok {
			return p, true
		}
		gen = now
	}
	// The table kept changing: once more, holding the changes back, as
	// a revocation does (access.Table.Exclusive).
	defer h.tokens.Exclusive()()
	t, err := h.lookupToken(hash)
	if err != nil {
		return access.Principal{}, false
	}
	return h.tokens.Add(t), true
}

// lookupToken reads the token of hash from the store.
func (h *Hub) lookupToken(hash string) (db.Token, error) {
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	return h.db.TokenByHash(ctx, hash)
}
