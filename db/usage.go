package db

import (
	"context"
	"fmt"
	"time"

	"albedo/wire"
)

// Usage is recorded per turn, in the transaction that commits the turn's
// end, so that totals (GET /v1/usage) are sums over rows, never a walk of
// the log: who asked (the input's author id), the provider that answered,
// when, and what it reported (nothing, or tokens and a cost).

// TurnUsage is one turn's row.
type TurnUsage struct {
	TurnID, Session, AuthorID, Provider string
	Usage                               *wire.Usage // nil: none reported
}

// RecordUsage writes a turn's usage (once: a turn ends once).
func (t *Tx) RecordUsage(ctx context.Context, u TurnUsage) error {
	var in, out, cached, reasoning int64
	var cost *float64
	if u.Usage != nil {
		in, out, cost = u.Usage.InputTokens, u.Usage.OutputTokens, u.Usage.Cost
		if u.Usage.CachedTokens != nil {
			cached = *u.Usage.CachedTokens
		}
		if u.Usage.ReasoningTokens != nil {
			reasoning = *u.Usage.ReasoningTokens
		}
	}
	if _, err := t.sql.ExecContext(ctx, t.bind(`INSERT INTO usage (turn_id, session, author_id, provider, at, reported, input, output, cached, reasoning, cost)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (turn_id) DO NOTHING`),
		u.TurnID, u.Session, u.AuthorID, u.Provider, formatTime(t.now), u.Usage != nil, in, out, cached, reasoning, cost); err != nil {
		return fmt.Errorf("record usage: %w", err)
	}
	return nil
}

// UsageKeys are the groupings of UsageTotals, by the column each groups.
var UsageKeys = map[string]string{
	"session":  "session",
	"member":   "author_id",
	"provider": "provider",
	// A session's participants are provider profiles and bots, each
	// recorded under its name: by participant is by provider.
	"participant": "provider",
	"day":         "substr(at, 1, 10)",
}

// sumOf sums an integer column as an integer on both stores (PostgreSQL
// sums bigints as numeric).
func sumOf(x string) string { return `CAST(sum(` + x + `) AS BIGINT)` }

// UsageTotals sums the usage of turns ended at or after since, grouped
// by one of UsageKeys, the largest cost (then the most tokens) first; at
// most limit groups.
func (d *DB) UsageTotals(ctx context.Context, by string, since time.Time, limit int) ([]wire.UsageTotal, error) {
	col, ok := UsageKeys[by]
	if !ok {
		return nil, fmt.Errorf("usage by %q: %w", by, ErrNotFound)
	}
	rows, err := d.ro.DB.QueryContext(ctx, d.dialect.bind(`SELECT `+col+` AS k, count(*), `+
		sumOf(`CASE WHEN reported THEN 0 ELSE 1 END`)+`, `+sumOf(`input`)+`, `+sumOf(`output`)+`, `+sumOf(`cached`)+`, `+sumOf(`reasoning`)+`,
		sum(cost), `+sumOf(`CASE WHEN reported AND cost IS NULL THEN 1 ELSE 0 END`)+`
		FROM usage WHERE at >= ? GROUP BY k ORDER BY coalesce(sum(cost), 0) DESC, sum(input) + sum(output) DESC, k LIMIT ?`),
		formatTime(since), limit)
	if err != nil {
		return nil, fmt.Errorf("usage totals: %w", err)
	}
	defer rows.Close()
	var out []wire.UsageTotal
	for rows.Next() {
		var u wire.UsageTotal
		if err := rows.Scan(&u.Key, &u.Turns, &u.Unreported, &u.InputTokens, &u.OutputTokens, &u.CachedTokens, &u.ReasoningTokens, &u.Cost, &u.Unpriced); err != nil {
			return nil, fmt.Errorf("usage totals: %w", err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// SessionUsage sums the usage of a session's turns and compactions.
func (d *DB) SessionUsage(ctx context.Context, session string) (wire.UsageTotal, error) {
	u := wire.UsageTotal{Key: session}
	err := d.ro.DB.QueryRowContext(ctx, d.dialect.bind(`SELECT count(*), `+
		`coalesce(`+sumOf(`CASE WHEN reported THEN 0 ELSE 1 END`)+`, 0), coalesce(`+sumOf(`input`)+`, 0), coalesce(`+sumOf(`output`)+`, 0), coalesce(`+sumOf(`cached`)+`, 0), coalesce(`+sumOf(`reasoning`)+`, 0),
		sum(cost), coalesce(`+sumOf(`CASE WHEN reported AND cost IS NULL THEN 1 ELSE 0 END`)+`, 0)
		FROM usage WHERE session = ?`), session).
		Scan(&u.Turns, &u.Unreported, &u.InputTokens, &u.OutputTokens, &u.CachedTokens, &u.ReasoningTokens, &u.Cost, &u.Unpriced)
	if err != nil {
		return u, fmt.Errorf("usage of %s: %w", session, err)
	}
	return u, nil
}
