package db

import (
	"context"
	"fmt"
	"strings"
)

// SessionState is what a daemon keeps of a session while anyone watches
// it (hub's channel): where its log is and what its status push says. A
// storm of reconnects reads it once for every session the crowd
// watches, and it is cheaper to read than the whole row: two of the
// view's four reads of the log, and none of the row's text.
type SessionState struct {
	ID          string
	Epoch       string
	Head        int64
	LastTurn    string // the newest turn event's state, "" if none
	Version     int64
	Model       string
	Effort      string
	BaseSession string // "" unless the session is a fork (SpansOf)
	// Provider, Participants and Respond say who answers its messages
	// (Session's).
	Provider, Participants, Respond string
}

// sessionStateColumns are a SessionState's, in the order scanSessionState
// reads them.
const sessionStateColumns = `id, epoch, head, last_turn, version, model, effort, base_session, provider, participants, respond`

// sessionStateSQL reads one session's state by id.
const sessionStateSQL = `SELECT ` + sessionStateColumns + ` FROM sessions_now WHERE id = ?`

func scanSessionState(r scanner) (SessionState, error) {
	var s SessionState
	err := r.Scan(&s.ID, &s.Epoch, &s.Head, &s.LastTurn, &s.Version, &s.Model, &s.Effort, &s.BaseSession, &s.Provider, &s.Participants, &s.Respond)
	return s, err
}

// SessionState reads one session's state: ErrNotFound (wrapped) if there
// is no such session.
func (d *DB) SessionState(ctx context.Context, id string) (SessionState, error) {
	return readSession(d, ctx, sessionStateSQL, id, scanSessionState)
}

// SessionStates reads the states of the sessions ids that exist, in one
// query, each once.
func (d *DB) SessionStates(ctx context.Context, ids []string) ([]SessionState, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	ctx, err := d.shortRead(ctx) // a few rows by their key
	if err != nil {
		return nil, err
	}
	// Plain SQL, as SessionState's: bun's builder cost more than the
	// read of a few rows by their key.
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	q := `SELECT ` + sessionStateColumns + ` FROM sessions_now WHERE id IN (?` + strings.Repeat(",?", len(ids)-1) + `)`
	rows, err := d.ro.DB.QueryContext(ctx, d.dialect.bind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("read sessions: %w", err)
	}
	ss, err := scanRows(rows, scanSessionState)
	if err != nil {
		return nil, fmt.Errorf("read sessions: %w", err)
	}
	return ss, nil
}

// shortRead is the context for a read of SQLite's that is bounded (a row
// by its key, a page of events): ctx's values, but not its cancellation,
// once ctx is checked. database/sql watches a cancellable context with a
// goroutine for each query, which cost such a read half as much again as
// the read itself (BenchmarkSessionRead); a read of microseconds has no
// use for being cut short. PostgreSQL's reads keep ctx: they cross a
// network that may stall.
func (d *DB) shortRead(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if d.dialect.pg || ctx.Done() == nil {
		return ctx, nil
	}
	return context.WithoutCancel(ctx), nil
}
