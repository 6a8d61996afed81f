package hub

import (
	"context"
	"errors"
	"slices"
	"time"

	"albedo/db"
	"albedo/hub/access"
	"albedo/hub/peer"
	"albedo/wire"
)

// A node of a cluster follows the changes to who may do what that every
// writer of the store records with them (db/changes.go): tokens revoked
// or narrowed, grants, sessions made or deleted. Every changesEvery, and
// at once when another node rings over NATS (subjChanges), it reads the
// changes numbered past the last it applied and applies those it did not
// make itself, so that what one node or an operator's command revokes is
// refused on every node within a second or two, with NATS or without.
// The node that makes a change applies it as it makes it.

// changesEvery is how often a node looks for changes without being rung.
const changesEvery = time.Second

// changesPage is how many transactions' changes a node reads at once.
const changesPage = 64

// followChanges applies the changes numbered past from until the hub
// closes.
func (h *Hub) followChanges(from int64) {
	defer h.loops.Done()
	t := time.NewTicker(h.opts.changesEvery)
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		case <-h.changesRung:
		}
		from = h.catchUpChanges(from)
	}
}

// ringChanges has followChanges look at once (another node rang).
func (h *Hub) ringChanges() {
	select {
	case h.changesRung <- struct{}{}:
	default:
	}
}

// catchUpChanges applies the changes numbered past from and returns the
// number it applied up to. What the store cannot give now (it is down)
// is left for the next look: applying a change twice is harmless, so a
// page is counted only once all of it is applied.
func (h *Hub) catchUpChanges(from int64) int64 {
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	gen, err := h.db.ChangeGen(ctx)
	if err != nil || gen == from {
		return from
	}
	for from < gen {
		upTo := min(gen, from+changesPage)
		cs, err := h.db.Changes(ctx, from, upTo)
		if err != nil {
			return from
		}
		if gen < from || len(cs) == 0 || cs[0].Gen != from+1 {
			// Pruned past from (this node was away longer than the store
			// keeps changes), or numbered anew (a store restored from
			// an older copy): read everything again.
			if err := h.resync(ctx); err != nil {
				h.log.Warn("re-read tokens and grants", "err", err)
				return from
			}
			return gen
		}
		if err := h.applyChanges(ctx, cs); err != nil {
			h.log.Warn("apply the cluster's changes", "err", err)
			return from
		}
		from = upTo
	}
	return from
}

// applyChanges applies the changes of cs that other nodes made: deleted
// sessions first, then what is read again as it stands now (grants,
// narrowed tokens), then revocations, which are final.
func (h *Hub) applyChanges(ctx context.Context, cs []db.Change) error {
	var revoked, narrowed, deleted []string
	var grants, reads []db.Change
	listed := false
	for _, c := range cs {
		if c.Node == h.opts.Node {
			continue
		}
		switch c.Kind {
		case db.ChangeRevoked:
			revoked = append(revoked, c.A)
		case db.ChangeNarrowed:
			narrowed = append(narrowed, c.A)
		case db.ChangeGrant:
			grants = append(grants, c)
		case db.ChangeDeleted:
			deleted = append(deleted, c.A)
		case db.ChangeCreated:
			listed = true
		case db.ChangeRead:
			reads = append(reads, c)
		case db.ChangePinned:
			h.pins.forget(c.A)
			h.feed.touch(c.B)
		case db.ChangeRenamed:
			// Their tokens act under the new name once read again, and
			// their connections connect again, as a narrowed token's do.
			ids, err := h.db.MemberTokenIDs(ctx, c.A)
			if err != nil {
				return err
			}
			narrowed = append(narrowed, ids...)
		}
	}
	for _, id := range deleted {
		h.sessionGone(id)
	}
	for _, r := range reads {
		if err := h.readElsewhere(ctx, r.A, r.B); err != nil {
			return err
		}
	}
	if err := h.applyGrants(ctx, grants); err != nil {
		return err
	}
	var still []string
	for _, id := range narrowed {
		t, err := h.db.TokenByID(ctx, id)
		if errors.Is(err, db.ErrNotFound) {
			revoked = append(revoked, id)
			continue
		}
		if err != nil {
			return err
		}
		h.tokens.Update(t)
		still = append(still, id)
	}
	if len(revoked) > 0 {
		done := h.tokens.Exclusive()
		h.tokens.Drop(revoked)
		done()
	}
	if f := h.tokenHook.Load(); f != nil && len(revoked)+len(still) > 0 {
		(*f)(revoked, still)
	}
	if listed || len(deleted) > 0 {
		h.sessionsChanged()
	}
	return nil
}

// resync makes the token table and the grants what the store holds, and
// ends what this node serves that is gone: connections of tokens revoked
// or narrowed meanwhile, subscriptions of members whose access was taken
// back, channels of deleted sessions.
func (h *Hub) resync(ctx context.Context) error {
	revoked, narrowed, err := h.reloadTokens(ctx)
	if err != nil {
		return err
	}
	if f := h.tokenHook.Load(); f != nil && len(revoked)+len(narrowed) > 0 {
		(*f)(revoked, narrowed)
	}
	h.mu.Lock()
	ids := make([]string, 0, len(h.chans))
	for id := range h.chans {
		ids = append(ids, id)
	}
	h.mu.Unlock()
	if len(ids) == 0 {
		h.sessionsChanged()
		return nil
	}
	heads, err := h.db.Heads(ctx, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		head, ok := heads[id]
		if ch := h.served(id); !ok || ch != nil && ch.epochOf() != "" && ch.epochOf() != head.Epoch {
			h.sessionGone(id)
			continue
		}
		h.cutLost(id)
	}
	h.sessionsChanged()
	return nil
}

// cutLost ends the subscriptions to session of members who no longer
// have access to it.
func (h *Hub) cutLost(session string) {
	ch := h.served(session)
	if ch == nil {
		return
	}
	ch.mu.Lock()
	var members []string
	for _, s := range ch.subList() {
		if i := s.conn.info; i.Role == wire.TokenMember && !slices.Contains(members, i.AuthorID) {
			members = append(members, i.AuthorID)
		}
	}
	ch.mu.Unlock()
	for _, m := range members {
		h.cutAccess(m, session, h.tokens.Access(m, session))
	}
}

// changed rings the other nodes of a cluster, over NATS, to look at the
// store's changes now rather than within changesEvery.
func (h *Hub) changed() {
	h.bus.Publish(peer.Changes{Node: h.opts.Node})
}

// applyGrants applies grants made on other nodes, read as they stand now
// in one query.
func (h *Hub) applyGrants(ctx context.Context, grants []db.Change) error {
	if len(grants) == 0 {
		return nil
	}
	pairs := make([]db.MemberSession, len(grants))
	for i, g := range grants {
		pairs[i] = db.MemberSession{Member: g.A, Session: g.B}
	}
	grantsNow, err := h.db.GrantsOf(ctx, pairs)
	if err != nil {
		return err
	}
	for _, p := range pairs {
		now := grantsNow[p]
		if was := h.tokens.SetAccess(p.Member, p.Session, now); access.Rank(now) < access.Rank(was) {
			h.cutAccess(p.Member, p.Session, now)
		}
		h.feed.accessChanged(p.Member, p.Session, now)
	}
	return nil
}
