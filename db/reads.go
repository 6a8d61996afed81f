package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// SetRead sets reader's read marker in session to offset (the caller
// checks it against the session's head first: Head).
func (t *Tx) SetRead(ctx context.Context, reader, session string, offset int64) error {
	if _, err := t.sql.ExecContext(ctx, t.bind(`INSERT INTO reads (reader, session, "offset") VALUES (?, ?, ?)
		ON CONFLICT (reader, session) DO UPDATE SET "offset" = excluded."offset"`), reader, session, offset); err != nil {
		return fmt.Errorf("set read marker: %w", err)
	}
	t.record(ChangeRead, reader, session)
	return nil
}

// ReadThrough moves reader's read marker in session up to offset, and
// never back: a person's own message is read by them, whichever device
// sent it.
func (t *Tx) ReadThrough(ctx context.Context, reader, session string, offset int64) error {
	if _, err := t.sql.ExecContext(ctx, t.bind(`INSERT INTO reads (reader, session, "offset") VALUES (?, ?, ?)
		ON CONFLICT (reader, session) DO UPDATE SET "offset" = excluded."offset" WHERE reads."offset" < excluded."offset"`), reader, session, offset); err != nil {
		return fmt.Errorf("move read marker: %w", err)
	}
	t.record(ChangeRead, reader, session)
	return nil
}

// ReadOf returns reader's read marker in session, 0 when they have none.
func (d *DB) ReadOf(ctx context.Context, reader, session string) (int64, error) {
	var off int64
	err := d.ro.DB.QueryRowContext(ctx, d.dialect.bind(`SELECT "offset" FROM reads WHERE reader = ? AND session = ?`), reader, session).Scan(&off)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read marker: %w", err)
	}
	return off, nil
}
