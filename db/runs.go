package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"albedo/wire"
)

// Turn leases (PostgreSQL; docs/cluster.md, "Turns run on exactly one
// node"). A session with work has a row in runs: the node that runs its
// turns, a fence raised by every claim, and a deadline the owner renews.
// Every turn write checks owner and fence in its own transaction
// (Tx.CheckRun), so a node that lost its claim (stopped past the
// deadline, then taken over) writes nothing more. A row, not an advisory
// lock: an advisory lock holds a connection for as long as it is held,
// and gives no fence that a late write could be checked against. On
// SQLite there is one daemon: it runs every session's turns, and the zero
// Lease checks nothing.

// ErrLeaseLost is a turn write refused because its node no longer holds
// the session's lease.
var ErrLeaseLost = errors.New("the session's turns were taken over by another node")

// Lease is a node's claim on a session's turns. The zero Lease is
// SQLite's: no claim, nothing to check.
type Lease struct {
	Node  string
	Fence int64
}

// Shared says whether other daemons write this database (PostgreSQL).
func (d *DB) Shared() bool { return d.dialect.pg }

// pendingWhere is the inputs_pending index's condition, word for word
// (migration 4), so that the queries that use it read the index.
const pendingWhere = `delivery IN ('` + wire.DeliveryQueued + `', '` + wire.DeliveryRunning + `')`

// Claim takes the lease of a session's turns for node, for length, unless
// another node holds one that has not expired. ok is false when it does,
// or when the session is gone.
func (d *DB) Claim(ctx context.Context, session, node string, length time.Duration) (_ Lease, ok bool, _ error) {
	var fence int64
	err := d.rw.DB.QueryRowContext(ctx, `INSERT INTO runs (session, owner, fence, lease_until)
		VALUES ($1, $2, 1, now() + $3 * interval '1 millisecond')
		ON CONFLICT (session) DO UPDATE SET owner = excluded.owner, fence = runs.fence + 1, lease_until = excluded.lease_until
		WHERE runs.owner = '' OR runs.lease_until < now()
		RETURNING fence`, session, node, length.Milliseconds()).Scan(&fence)
	switch {
	case errors.Is(err, sql.ErrNoRows), pgCode(err) == pgForeignKeyViolation:
		return Lease{}, false, nil
	case err != nil:
		return Lease{}, false, fmt.Errorf("claim session %s: %w", session, err)
	}
	return Lease{Node: node, Fence: fence}, true, nil
}

// Renew moves a lease's deadline to length from now. ok is false when
// the lease was lost: taken over, or its session deleted.
func (d *DB) Renew(ctx context.Context, session string, l Lease, length time.Duration) (ok bool, _ error) {
	res, err := d.rw.DB.ExecContext(ctx, `UPDATE runs SET lease_until = now() + $4 * interval '1 millisecond'
		WHERE session = $1 AND owner = $2 AND fence = $3`, session, l.Node, l.Fence, length.Milliseconds())
	if err != nil {
		return false, fmt.Errorf("renew lease of %s: %w", session, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Release gives a lease up once its session has no input left to run,
// and says whether it did. It looks under the session row's lock, which
// every batch that accepts an input holds to its commit: an input
// committed before the release is seen here, and one committed after it
// finds the lease free for its own node to claim, so none waits for a
// claim that never comes. force gives it up whatever is left (a stopping
// node), for another node to find (Orphans).
func (d *DB) Release(ctx context.Context, session string, l Lease, force bool) (released bool, _ error) {
	tx, err := d.rw.DB.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("release lease of %s: %w", session, err)
	}
	defer tx.Rollback()
	var exists bool
	if err := tx.QueryRowContext(ctx, `SELECT true FROM sessions WHERE id = $1 FOR UPDATE`, session).Scan(&exists); errors.Is(err, sql.ErrNoRows) {
		return true, nil // deleted, and its run with it
	} else if err != nil {
		return false, fmt.Errorf("release lease of %s: %w", session, err)
	}
	if !force {
		var pending bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM inputs WHERE session = $1 AND `+pendingWhere+`)`, session).Scan(&pending); err != nil {
			return false, fmt.Errorf("release lease of %s: %w", session, err)
		}
		if pending {
			return false, nil
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET owner = '' WHERE session = $1 AND owner = $2 AND fence = $3`, session, l.Node, l.Fence); err != nil {
		return false, fmt.Errorf("release lease of %s: %w", session, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("release lease of %s: %w", session, err)
	}
	return true, nil
}

// Orphans lists sessions with inputs to run and no live lease: their
// node died or stopped (its lease expired or was given up), or died
// between accepting an input and claiming the lease. At most limit.
func (d *DB) Orphans(ctx context.Context, limit int) ([]string, error) {
	rows, err := d.ro.DB.QueryContext(ctx, `SELECT DISTINCT i.session FROM inputs i
		LEFT JOIN runs r ON r.session = i.session
		WHERE i.`+pendingWhere+` AND (r.session IS NULL OR r.owner = '' OR r.lease_until < now())
		LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("look for orphaned turns: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("look for orphaned turns: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// PendingInputsOf lists a session's inputs whose turn has not ended, in
// order, at most limit of them: what the holder of its lease runs next.
func (d *DB) PendingInputsOf(ctx context.Context, session string, limit int) ([]Input, error) {
	rows, err := d.ro.DB.QueryContext(ctx, d.dialect.bind(`SELECT `+inputColumns+` FROM inputs
		WHERE session = ? AND `+pendingWhere+` ORDER BY ord LIMIT ?`), session, limit)
	if err != nil {
		return nil, fmt.Errorf("pending inputs of %s: %w", session, err)
	}
	defer rows.Close()
	var ins []Input
	for rows.Next() {
		var in Input
		if err := scanInput(rows, &in); err != nil {
			return nil, fmt.Errorf("pending inputs of %s: %w", session, err)
		}
		ins = append(ins, in)
	}
	return ins, rows.Err()
}

// CheckRun refuses the request (ErrLeaseLost) unless l still holds the
// session's lease, and keeps it held to the commit: the row is read FOR
// SHARE, so a takeover's claim waits for this batch and then repairs
// what it wrote. The zero Lease (SQLite) checks nothing.
func (t *Tx) CheckRun(ctx context.Context, session string, l Lease) error {
	if l.Fence == 0 {
		return nil
	}
	var one int
	err := t.sql.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE session = $1 AND owner = $2 AND fence = $3 FOR SHARE`,
		session, l.Node, l.Fence).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("session %s, fence %d: %w", session, l.Fence, ErrLeaseLost)
	}
	if err != nil {
		return fmt.Errorf("check lease of %s: %w", session, err)
	}
	return nil
}

// RunOwner names the node whose lease on a session's turns is live, or "".
func (d *DB) RunOwner(ctx context.Context, session string) (string, error) {
	var owner string
	err := d.ro.DB.QueryRowContext(ctx, `SELECT owner FROM runs WHERE session = $1 AND owner <> '' AND lease_until > now()`, session).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("who runs %s: %w", session, err)
	}
	return owner, nil
}

// ClusterID is the identity of the cluster that shares this database
// (migration cluster_id), which its nodes put in their NATS subjects; ""
// on SQLite, which has one daemon.
func (d *DB) ClusterID(ctx context.Context) (string, error) {
	if !d.dialect.pg {
		return "", nil
	}
	var id string
	if err := d.ro.NewSelect().Table("cluster").Column("id").Limit(1).Scan(ctx, &id); err != nil {
		return "", fmt.Errorf("read the cluster's id: %w", err)
	}
	return id, nil
}
