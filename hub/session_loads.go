package hub

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"albedo/db"
)

// A channel reads its session's state (db.SessionState: the part of the
// row it keeps) when it is first used (channel.load).
// A storm of reconnects wants thousands at once. On PostgreSQL one query
// each cost each its round trip and its statement, on the node and on
// the server; sessionLoads gathers the loads that wait meanwhile into one
// query, as the writer gathers writes: the first load finds no reader
// and starts one, which reads up to loadsAtOnce of what waits at a time,
// until nothing does. A load alone costs what it did (db.SessionState). On
// SQLite a load is a call into the library, cheaper alone than in a
// gathered query and free to run beside the others: each goes at once.

// loadsAtOnce bounds the sessions one query reads.
const loadsAtOnce = 64

// sessionLoads reads sessions' rows for channels, many in one query when
// many wait.
type sessionLoads struct {
	db  *db.DB
	ctx context.Context // the hub's: its close ends the reads

	mu      sync.Mutex
	waiting []*sessionLoad
	reading bool
}

// sessionLoad is one load waiting for its row.
type sessionLoad struct {
	id   string
	done chan struct{} // closed once s or err is set
	s    db.SessionState
	err  error
}

func newSessionLoads(ctx context.Context, d *db.DB) *sessionLoads {
	return &sessionLoads{db: d, ctx: ctx}
}

// get reads session id's state: ErrNotFound (wrapped) if there is none.
func (l *sessionLoads) get(ctx context.Context, id string) (db.SessionState, error) {
	if !l.db.Shared() {
		return l.db.SessionState(ctx, id)
	}
	r := &sessionLoad{id: id, done: make(chan struct{})}
	l.mu.Lock()
	l.waiting = append(l.waiting, r)
	start := !l.reading
	l.reading = true
	l.mu.Unlock()
	if start {
		go l.read()
	}
	select {
	case <-r.done:
		return r.s, r.err
	case <-ctx.Done():
		return db.SessionState{}, ctx.Err()
	}
}

// read answers what waits, loadsAtOnce at a time, until nothing does.
func (l *sessionLoads) read() {
	for {
		l.mu.Lock()
		n := min(len(l.waiting), loadsAtOnce)
		if n == 0 {
			l.waiting, l.reading = nil, false // the backing array goes with a storm
			l.mu.Unlock()
			return
		}
		batch := l.waiting[:n:n]
		l.waiting = l.waiting[n:]
		l.mu.Unlock()
		l.answer(batch)
	}
}

// answer reads the states of batch's sessions, in one query if it names
// more than one, and hands each load its own.
func (l *sessionLoads) answer(batch []*sessionLoad) {
	defer func() {
		for _, r := range batch {
			close(r.done)
		}
	}()
	if len(batch) == 1 {
		batch[0].s, batch[0].err = l.db.SessionState(l.ctx, batch[0].id)
		return
	}
	ids := make([]string, 0, len(batch))
	for _, r := range batch {
		ids = append(ids, r.id) // a repeat is read once: SessionStates reads each row once
	}
	ss, err := l.db.SessionStates(l.ctx, ids)
	if err != nil {
		for _, r := range batch {
			r.err = fmt.Errorf("read session: %w", err)
		}
		return
	}
	byID := make(map[string]db.SessionState, len(ss))
	for _, s := range ss {
		byID[s.ID] = s
	}
	for _, r := range batch {
		var ok bool
		if r.s, ok = byID[r.id]; !ok {
			r.err = fmt.Errorf("session %q: %w", r.id, db.ErrNotFound)
		}
	}
}

// preload reads, loadsAtOnce to a query, the sessions among ids whose
// channels are not loaded yet — a hello's subs, after a restart — so
// that each sub finds its channel loaded rather than read its row alone.
// What it cannot read (a session that does not exist, a failed query) is
// left to the sub's own load, which says so.
func (h *Hub) preload(ctx context.Context, ids []string) {
	var want []*channel
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		if ch := h.ensureChannel(id); !ch.isLoaded() {
			want = append(want, ch)
		}
	}
	if len(want) < 2 {
		return // one row is read as cheaply alone
	}
	for len(want) > 0 {
		part := want[:min(len(want), loadsAtOnce)]
		want = want[len(part):]
		chIDs := make([]string, len(part))
		for i, ch := range part {
			chIDs[i] = ch.id
		}
		ss, err := h.db.SessionStates(ctx, chIDs)
		if err != nil {
			return
		}
		for _, s := range ss {
			// A part is at most loadsAtOnce channels: each row's is
			// found by a look along it.
			i := slices.IndexFunc(part, func(ch *channel) bool { return ch.id == s.ID })
			if i >= 0 && part[i].loadFrom(ctx, h.db, s) != nil {
				return
			}
		}
	}
}
