package db

import (
	"context"
	"errors"
	"fmt"

	"albedo/wire"
)

// Pins are the sessions each person keeps at the top of their list, by
// their author id, as read markers are (reads.go): theirs alone, on every
// device, at most wire.MaxPins each.

// ErrTooMany refuses a pin past wire.MaxPins.
var ErrTooMany = errors.New("too many")

// Pin pins session for reader; pinning it again keeps its place. Past
// wire.MaxPins it is ErrTooMany.
func (t *Tx) Pin(ctx context.Context, reader, session string) error {
	var n int
	if err := t.sql.QueryRowContext(ctx, t.bind(`SELECT count(*) FROM pins WHERE reader = ? AND session <> ?`), reader, session).Scan(&n); err != nil {
		return fmt.Errorf("count pins: %w", err)
	}
	if n >= wire.MaxPins {
		return fmt.Errorf("%d sessions are pinned already: %w", n, ErrTooMany)
	}
	if _, err := t.sql.ExecContext(ctx, t.bind(`INSERT INTO pins (reader, session, at) VALUES (?, ?, ?)
		ON CONFLICT (reader, session) DO NOTHING`), reader, session, t.nowText()); err != nil {
		return fmt.Errorf("pin: %w", err)
	}
	t.record(ChangePinned, reader, session)
	return nil
}

// Unpin unpins session for reader (nothing when it was not pinned).
func (t *Tx) Unpin(ctx context.Context, reader, session string) error {
	if _, err := t.sql.ExecContext(ctx, t.bind(`DELETE FROM pins WHERE reader = ? AND session = ?`), reader, session); err != nil {
		return fmt.Errorf("unpin: %w", err)
	}
	t.record(ChangePinned, reader, session)
	return nil
}

// PinsOf lists the sessions reader pinned, the first pinned first.
func (d *DB) PinsOf(ctx context.Context, reader string) ([]string, error) {
	rows, err := d.ro.DB.QueryContext(ctx, d.dialect.bind(`SELECT session FROM pins WHERE reader = ? ORDER BY at, session LIMIT ?`), reader, wire.MaxPins)
	if err != nil {
		return nil, fmt.Errorf("read pins: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("read pins: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
