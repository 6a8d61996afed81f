package hub

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"albedo/db"
	"albedo/wire"
)

// MaxUsageGroups bounds the groups of one usage report.
const MaxUsageGroups = 1000

// UsageReport sums the turns' usage since a time (RFC 3339, or a day,
// YYYY-MM-DD, from its start in UTC; "" for the last 30 days), grouped
// by session, member (the id of who asked), provider or day (UTC), the
// most costly groups first (docs/protocol.md, "Usage").
func (h *Hub) UsageReport(ctx context.Context, by, since string) (wire.UsageReport, error) {
	by = cmp.Or(by, "session")
	if _, ok := db.UsageKeys[by]; !ok {
		keys := make([]string, 0, len(db.UsageKeys))
		for k := range db.UsageKeys {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return wire.UsageReport{}, wire.Errorf(wire.CodeBadRequest, "by must be one of %s", strings.Join(keys, ", "))
	}
	from, err := parseSince(since)
	if err != nil {
		return wire.UsageReport{}, err
	}
	totals, err := h.db.UsageTotals(ctx, by, from, MaxUsageGroups)
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		return wire.UsageReport{}, wireErr(err)
	}
	if totals == nil {
		totals = []wire.UsageTotal{}
	}
	return wire.UsageReport{By: by, Since: from.UTC().Format(time.RFC3339), Totals: totals}, nil
}

// parseSince reads a report's start.
func parseSince(s string) (time.Time, error) {
	if s == "" {
		return time.Now().AddDate(0, 0, -30), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, wire.Errorf(wire.CodeBadRequest, "since must be a time (2026-12-01T08:00:00Z) or a day (2026-12-01), not %q", s)
}
