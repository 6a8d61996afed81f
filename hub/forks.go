package hub

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"albedo/db"
	"albedo/hub/access"
	"albedo/wire"
)

// Fork makes a new session whose history is parent's events 1..req.At
// (db's forks.go says how, without a copy), with the parent's settings
// and by as its creator. With req.Rerun, the input at req.At (or the one
// the reply there answered) runs again in it, as its first turn.
func (h *Hub) Fork(ctx context.Context, by access.Principal, parent string, req wire.ForkRequest) (wire.Session, error) {
	if err := access.CheckTexts("title", req.Title); err != nil {
		return wire.Session{}, err
	}
	if req.At < 0 {
		return wire.Session{}, wire.Errorf(wire.CodeBadRequest, "at must be 0 or the offset of an event")
	}
	p, err := h.db.Session(ctx, parent)
	if err != nil {
		return wire.Session{}, wireErr(err)
	}
	if err := h.checkAgent(by, p.Provider, p.Workspace); err != nil {
		return wire.Session{}, err
	}
	u, err := uuid.NewV7()
	if err != nil {
		return wire.Session{}, fmt.Errorf("session id: %w", err)
	}
	child := db.Session{
		ID: u.String(), Epoch: randomID(8), Title: p.Title, Workspace: p.Workspace,
		Provider: p.Provider, Model: p.Model, Effort: p.Effort, System: p.System, Tools: p.Tools,
		Participants: p.Participants, Respond: p.Respond, Temperature: p.Temperature, CreateHash: "fork",
	}
	if req.Title != "" {
		child.Title = req.Title
	}
	reader, _ := readerOf(by)
	var out db.Session
	var rerun *db.Input
	_, err = h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		var err error
		if req.Title == "" && p.Title != "" {
			n, err := tx.ForkCount(ctx, parent)
			if err != nil {
				return err
			}
			child.Title = forkTitle(p.Title, n+1)
		}
		out, rerun, err = tx.Fork(ctx, db.ForkOf{Parent: parent, At: req.At, Rerun: req.Rerun, Child: child})
		if err != nil {
			return err
		}
		if by.MemberID != "" {
			if err := tx.PutGrant(ctx, db.Grant{Session: out.ID, Member: by.MemberID, Access: wire.AccessCreator}); err != nil {
				return err
			}
		}
		if reader == "" {
			return nil
		}
		// Who forks has read what the fork holds.
		return tx.SetRead(ctx, reader, out.ID, out.ParentOffset)
	})
	switch {
	case errors.Is(err, db.ErrOutOfRange), errors.Is(err, db.ErrNoInput):
		return wire.Session{}, wire.Errorf(wire.CodeBadRequest, "%v", err)
	case err != nil:
		return wire.Session{}, wireErr(err)
	}
	if by.MemberID != "" {
		h.tokens.SetAccess(by.MemberID, out.ID, wire.AccessCreator)
	}
	h.feed.session(out)
	h.sessionsChanged()
	h.changed()
	if rerun != nil {
		ch := h.ensureChannel(out.ID)
		if h.db.Shared() {
			h.wake(ch)
		} else {
			h.enqueue(ch, queuedOf(*rerun, db.Lease{}))
		}
	}
	return h.wireSession(out), nil
}

// forkTitle is the title of a parent's nth fork when none is given, so
// that forks read as such wherever titles are shown (and a session's
// title names it alone, for the CLI): "plan (fork 2)", and a fork of
// that "plan (fork 2.1)". It stays within the bound of titles, cutting
// the parent's title, not the mark.
func forkTitle(parent string, n int) string {
	base, mark := parent, strconv.Itoa(n)
	if b, rest, ok := strings.Cut(parent, " (fork "); ok && strings.HasSuffix(rest, ")") && forkMark(strings.TrimSuffix(rest, ")")) {
		base, mark = b, strings.TrimSuffix(rest, ")")+"."+mark
	}
	suffix := " (fork " + mark + ")"
	if room := wire.MaxTitleBytes - len(suffix); len(base) > room {
		base = wire.CutUTF8(base, max(room, 0))
	}
	return base + suffix
}

// forkMark says whether s is a fork's number: digits and dots.
func forkMark(s string) bool {
	return s != "" && strings.Trim(s, "0123456789.") == "" && !strings.HasPrefix(s, ".") && !strings.HasSuffix(s, ".")
}

// Forks lists the forks of a session that by may see.
func (h *Hub) Forks(ctx context.Context, by access.Principal, parent string) ([]wire.Session, error) {
	ss, err := h.db.Forks(ctx, parent)
	if err != nil {
		return nil, wireErr(err)
	}
	out := make([]wire.Session, 0, len(ss))
	for _, s := range ss {
		if by.Role == "" || by.CanSee(s.ID) {
			w := h.wireSession(s)
			if by.Role != "" {
				w.Access = by.Access(s.ID)
			}
			out = append(out, w)
		}
	}
	return out, nil
}

// spansOf returns the spans of ch's session as the channel keeps them,
// resolving them first if it has none.
func (h *Hub) spansOf(ctx context.Context, ch *channel) (db.Spans, error) {
	ch.mu.Lock()
	sp := ch.spans
	ch.mu.Unlock()
	if sp != nil {
		return sp, nil
	}
	return h.respan(ctx, ch)
}

// respan resolves ch's spans again (a parent's deletion moved them) and
// keeps them.
func (h *Hub) respan(ctx context.Context, ch *channel) (db.Spans, error) {
	_, sp, err := h.db.SpansOf(ctx, ch.id)
	if err != nil {
		return nil, err
	}
	ch.mu.Lock()
	ch.spans = sp
	ch.mu.Unlock()
	return sp, nil
}

// eventsAfter reads a page of ch's session after an offset, through its
// spans (db.EventsAfterIn), resolving them again once if they moved.
func (h *Hub) eventsAfter(ctx context.Context, ch *channel, after int64, limit, maxBytes int) ([]db.Event, error) {
	sp, err := h.spansOf(ctx, ch)
	if err != nil {
		return nil, err
	}
	evs, err := h.db.EventsAfterIn(ctx, sp, after, limit, maxBytes)
	if errors.Is(err, db.ErrMoved) {
		if sp, err = h.respan(ctx, ch); err != nil {
			return nil, err
		}
		evs, err = h.db.EventsAfterIn(ctx, sp, after, limit, maxBytes)
	}
	return evs, err
}
