package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// AgentSession is what the store keeps of a session's coding agent
// (migration agent_sessions): the agent's session id its last process
// held, under which profile, and what to tell the agent at its next
// prompt.
type AgentSession struct {
	Session, Profile, AgentSession, Note string
}

// SetAgentSession stores a session's agent session, replacing the one
// before.
func (t *Tx) SetAgentSession(ctx context.Context, a AgentSession) error {
	_, err := t.sql.ExecContext(ctx, t.bind(`INSERT INTO agent_sessions (session, profile, agent_session, note) VALUES (?, ?, ?, ?)
		ON CONFLICT (session) DO UPDATE SET profile = excluded.profile, agent_session = excluded.agent_session, note = excluded.note`),
		a.Session, a.Profile, a.AgentSession, a.Note)
	if err != nil {
		return fmt.Errorf("set agent session: %w", err)
	}
	return nil
}

// NoteAgent sets what a session's agent is told at its next prompt,
// keeping its session id; a session with no agent session gets a row of
// its own.
func (t *Tx) NoteAgent(ctx context.Context, session, profile, note string) error {
	_, err := t.sql.ExecContext(ctx, t.bind(`INSERT INTO agent_sessions (session, profile, agent_session, note) VALUES (?, ?, '', ?)
		ON CONFLICT (session) DO UPDATE SET note = excluded.note`), session, profile, note)
	if err != nil {
		return fmt.Errorf("note for the agent: %w", err)
	}
	return nil
}

// AgentSessionOf reads a session's agent session; the zero value (with
// the session) when it has none.
func (d *DB) AgentSessionOf(ctx context.Context, session string) (AgentSession, error) {
	a := AgentSession{Session: session}
	err := d.ro.DB.QueryRowContext(ctx, d.dialect.bind(`SELECT profile, agent_session, note FROM agent_sessions WHERE session = ?`), session).
		Scan(&a.Profile, &a.AgentSession, &a.Note)
	if errors.Is(err, sql.ErrNoRows) {
		return a, nil
	}
	if err != nil {
		return a, fmt.Errorf("agent session: %w", err)
	}
	return a, nil
}

// deleteAgentSession removes a deleted session's agent session.
func (t *Tx) deleteAgentSession(ctx context.Context, session string) error {
	if _, err := t.sql.ExecContext(ctx, t.bind(`DELETE FROM agent_sessions WHERE session = ?`), session); err != nil {
		return fmt.Errorf("delete agent session: %w", err)
	}
	return nil
}
