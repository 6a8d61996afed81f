package hub

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"albedo/hub/access"
	"albedo/wire"
)

// feedBatch is what a connection's cursor finds past it: the sessions to
// say (copies of their entries), those gone, the number of the last
// change looked at, and whether that was the newest.
type feedBatch struct {
	entries   []feedEntry
	gone      []string
	upTo      uint64
	caughtUp  bool
	watermark time.Time // the index's, when caughtUp
}

// changesAfter finds, for a cursor at change from, the next n sessions p
// may see that changed after it (and not before minAt), in the order of
// their changes: from the ring when it still holds from's successor, else
// by a walk of the index.
func (f *feed) changesAfter(from uint64, minAt time.Time, p access.Principal, n int) feedBatch {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := feedBatch{upTo: from}
	take := func(e *feedEntry) bool {
		b.upTo = e.seq
		switch {
		case e.at.Before(minAt):
		case e.gone:
			b.gone = append(b.gone, e.id)
		case p.CanSee(e.id):
			b.entries = append(b.entries, *e)
		}
		return len(b.entries)+len(b.gone) < n
	}
	if i, ok := f.ringAfter(from); ok {
		for _, ch := range f.ring[i:] {
			if e := f.entries[ch.id]; e != nil && e.seq == ch.seq && !take(e) {
				break
			}
			b.upTo = ch.seq
		}
	} else {
		var after []*feedEntry
		for _, e := range f.entries {
			if e.seq > from {
				after = append(after, e)
			}
		}
		sort.Slice(after, func(i, j int) bool { return after[i].seq < after[j].seq })
		for _, e := range after {
			if !take(e) {
				break
			}
		}
		if len(after) > 0 && b.upTo == after[len(after)-1].seq {
			b.upTo = f.seq
		}
	}
	if b.upTo >= f.seq || from >= f.seq {
		b.upTo, b.caughtUp, b.watermark = f.seq, true, f.watermark()
	}
	return b
}

// ringAfter returns the index in the ring of the first change after from,
// and whether the ring holds every change after from. Caller holds f.mu.
func (f *feed) ringAfter(from uint64) (int, bool) {
	if from >= f.seq {
		return len(f.ring), true
	}
	if len(f.ring) == 0 || f.ring[0].seq > from+1 {
		return 0, false
	}
	return int(from + 1 - f.ring[0].seq), true
}

// page returns up to n sessions p may see, by activity, newest first:
// those after after (nil for the first page). It sorts the index, which
// costs the home's size, once per page: pages are asked for by a person
// scrolling, not by every change. Caller holds f.mu.
func (f *feed) page(p access.Principal, after *pageAfter, n int) []feedEntry {
	var all []*feedEntry
	for _, e := range f.entries {
		if e.gone || e.archived || !p.CanSee(e.id) {
			continue
		}
		if after != nil && !feedOlder(e.at, e.id, after.at, after.id) {
			continue
		}
		all = append(all, e)
	}
	slices.SortFunc(all, func(a, b *feedEntry) int {
		if a.at.Equal(b.at) {
			return strings.Compare(b.id, a.id)
		}
		return b.at.Compare(a.at)
	})
	out := make([]feedEntry, 0, min(n, len(all)))
	for _, e := range all[:min(n, len(all))] {
		out = append(out, *e)
	}
	return out
}

// pinned returns the entries of ids (a person's pins) that p may see,
// not deleted nor archived, and not among page. Caller holds f.mu.
func (f *feed) pinned(p access.Principal, ids []string, page []feedEntry) []feedEntry {
	var out []feedEntry
	for _, id := range ids {
		e := f.entries[id]
		if e == nil || e.gone || e.archived || !p.CanSee(id) || slices.ContainsFunc(page, func(x feedEntry) bool { return x.id == id }) {
			continue
		}
		out = append(out, *e)
	}
	return out
}

// feedOlder says whether the session at, id comes after the one at bAt,
// bID in the feed's order (newest first, then by id, descending).
func feedOlder(at time.Time, id string, bAt time.Time, bID string) bool {
	if at.Equal(bAt) {
		return id < bID
	}
	return at.Before(bAt)
}

// feedItems makes the feed's items of entries, for p, whose read markers
// are reader's ("" for none), with the counts kept for the connection
// (nil: none kept): with what this node knows of each
// session's run, its newest message (read from the store when the index
// does not have it), and the person's unread count.
func (h *Hub) feedItems(ctx context.Context, entries []feedEntry, p access.Principal, reader string, counts *unreadCounts) []wire.FeedItem {
	items := make([]wire.FeedItem, 0, len(entries))
	def := h.providers.Default()
	pins := h.pins.of(ctx, h.db, reader)
	for i := range entries {
		e := &entries[i]
		it := wire.FeedItem{ID: e.id, Title: e.title, Provider: cmp.Or(e.provider, def), Head: e.head,
			At: e.at.UTC(), LastTurn: e.lastTurn, Phase: wire.PhaseIdle, Access: p.Access(e.id), Parent: e.parent,
			Pinned: pins[e.id], Archived: e.archived}
		if ch := h.served(e.id); ch != nil {
			ch.mu.Lock()
			st := ch.status()
			ch.mu.Unlock()
			it.Phase, it.Queued, it.Pending = st.Phase, st.Queued, st.Pending
		} else if e.lastTurn == wire.TurnStarted {
			it.Phase = wire.PhaseRunning
		}
		it.Last = h.feed.lastOf(ctx, e)
		if reader != "" {
			it.Read, it.Unread = counts.of(ctx, h, reader, e)
		}
		items = append(items, it)
	}
	return items
}

// lastOf returns the newest message of e, shortened, and keeps it in the
// index for the next feed that shows it.
func (f *feed) lastOf(ctx context.Context, e *feedEntry) *wire.FeedLast {
	switch {
	case e.lastKnown && e.lastJSON == nil:
		return e.last
	case e.lastKnown:
		e.last = shortLast(e.lastJSON)
	case e.head > 0:
		ev, ok, err := f.h.db.LastMessage(ctx, e.id)
		if err != nil {
			return nil
		}
		e.last = nil
		if ok {
			e.last = shortLast(ev.JSON)
		}
	default:
		e.last = nil
	}
	f.mu.Lock()
	if in := f.entries[e.id]; in != nil && in.seq == e.seq {
		in.last, in.lastJSON, in.lastKnown = e.last, nil, true
	}
	f.mu.Unlock()
	return e.last
}

// shortLast is a message event as the feed shows it: its author and the
// first line of its text, cut to wire.MaxFeedLine bytes.
func shortLast(js []byte) *wire.FeedLast {
	var ev wire.Event
	if json.Unmarshal(js, &ev) != nil {
		return nil
	}
	line, _, _ := strings.Cut(strings.TrimSpace(ev.Text), "\n")
	if len(line) > wire.MaxFeedLine {
		cut := wire.MaxFeedLine
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		line = line[:cut] + "…"
	}
	return &wire.FeedLast{Offset: ev.Offset, Author: ev.Author, Role: ev.Role, Text: line}
}
