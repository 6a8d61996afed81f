package db

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// A cluster's changes to who may do what are recorded in the store, in
// the transaction that makes each (migration changes), so that every
// node applies them within a second with NATS or without, and so that a
// command run from an operator's shell (`albedo tokens remove --db`)
// reaches every node without knowing where they run. SQLite has one
// daemon, which applies its own changes as it makes them: it records
// none.

// ChangeKind says what a Change changed.
type ChangeKind string

// The kinds of change. A and B name what changed.
const (
	ChangeRevoked  ChangeKind = "revoked"  // A: a token's id, deleted
	ChangeNarrowed ChangeKind = "narrowed" // A: a token's id, whose sessions changed
	ChangeGrant    ChangeKind = "grant"    // A: a member's id; B: a session whose access changed
	ChangeDeleted  ChangeKind = "deleted"  // A: a session deleted
	ChangeCreated  ChangeKind = "created"  // A: a session made
	ChangeRead     ChangeKind = "read"     // A: a person's author id; B: a session where they set their read marker
	ChangeRenamed  ChangeKind = "renamed"  // A: a member's id; B: their new name
	ChangePinned   ChangeKind = "pinned"   // A: a person's author id; B: a session they pinned or unpinned
)

// Change is one recorded change. Gen numbers the transaction that made
// it; N orders the changes of one transaction; Node is who made it (the
// writer's Options.Node).
type Change struct {
	bun.BaseModel `bun:"table:changes"`

	Gen  int64      `bun:"gen,pk"`
	N    int        `bun:"n,pk"`
	Node string     `bun:"node"`
	Kind ChangeKind `bun:"kind"`
	A    string     `bun:"a"`
	B    string     `bun:"b"`
	At   string     `bun:"at"`
}

// keepChanges is how many transactions' changes the store keeps: a node
// that falls further behind (stopped, or cut off from the store for
// long) reads everything again (hub's resync) rather than the changes.
const keepChanges = 4096

// pruneEvery is how often, in transactions, the oldest are pruned.
const pruneEvery = 64

// record notes a change this request makes, written at the batch's flush
// (recordChanges) on a shared store, and dropped on SQLite.
func (t *Tx) record(kind ChangeKind, a, b string) {
	if t.batch.w.shared {
		t.changes = append(t.changes, Change{Kind: kind, A: a, B: b})
	}
}

// recordRevoked notes the tokens of ids as revoked.
func (t *Tx) recordRevoked(ids []string) {
	for _, id := range ids {
		t.record(ChangeRevoked, id, "")
	}
}

// recordChanges writes the changes of the batch's accepted requests with
// the next number of cluster.gen. It is the batch's last statement but
// its commit: the row of cluster stays locked until the commit, so every
// batch that takes it takes it last, no lock is waited for while it is
// held, and the numbers commit in order.
func (b *batchState) recordChanges(ctx context.Context, tx *batchTx, reqs []*request) error {
	var cs []Change
	for _, r := range reqs {
		if r.fail == nil && r.tx != nil {
			cs = append(cs, r.tx.changes...)
		}
	}
	if len(cs) == 0 {
		return nil
	}
	// On PostgreSQL the flush's queued statements go before this one
	// (literalConn.first): the changes' rows follow theirs.
	var gen int64
	if err := tx.QueryRowContext(ctx, `UPDATE cluster SET gen = gen + 1 RETURNING gen`).Scan(&gen); err != nil {
		return fmt.Errorf("number changes: %w", err)
	}
	for i := range cs {
		cs[i].Gen, cs[i].N, cs[i].Node, cs[i].At = gen, i, b.w.node, b.at
	}
	if _, err := tx.NewInsert().Model(&cs).Exec(ctx); err != nil {
		return fmt.Errorf("record changes: %w", err)
	}
	if gen%pruneEvery == 0 {
		if _, err := tx.sql.ExecContext(ctx, `DELETE FROM changes WHERE gen <= $1`, gen-keepChanges); err != nil {
			return fmt.Errorf("prune changes: %w", err)
		}
	}
	return nil
}

// ChangeGen is the number of the newest transaction that recorded a
// change; 0 on SQLite, which records none.
func (d *DB) ChangeGen(ctx context.Context) (int64, error) {
	if !d.dialect.pg {
		return 0, nil
	}
	var gen int64
	if err := d.ro.QueryRowContext(ctx, `SELECT gen FROM cluster LIMIT 1`).Scan(&gen); err != nil {
		return 0, fmt.Errorf("read the changes' number: %w", err)
	}
	return gen, nil
}

// Changes reads the changes of the transactions numbered after..upTo, in
// order. A number missing from the start of what it returns was pruned.
func (d *DB) Changes(ctx context.Context, after, upTo int64) ([]Change, error) {
	var cs []Change
	if err := d.ro.NewSelect().Model(&cs).Where("gen > ? AND gen <= ?", after, upTo).Order("gen", "n").Scan(ctx); err != nil {
		return nil, fmt.Errorf("read changes: %w", err)
	}
	return cs, nil
}
