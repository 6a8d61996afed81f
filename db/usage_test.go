package db

import (
	"context"
	"testing"
	"time"

	"albedo/wire"
)

// Usage rows sum by each grouping on both stores; a turn recorded twice
// counts once; a turn with no report counts as unreported, not as zeros.
func TestUsageTotals(t *testing.T) {
	eachBackend(t, func(t *testing.T, target string) {
		d := openOn(t, target, Options{})
		ctx := context.Background()
		cached, cost := int64(40), 0.5
		rows := []TurnUsage{
			{TurnID: "t1", Session: "s", AuthorID: "ann", Provider: "p", Usage: &wire.Usage{InputTokens: 100, OutputTokens: 10, CachedTokens: &cached, Cost: &cost}},
			{TurnID: "t1", Session: "s", AuthorID: "ann", Provider: "p", Usage: &wire.Usage{InputTokens: 100, OutputTokens: 10}},
			{TurnID: "t2", Session: "s", AuthorID: "bob", Provider: "p", Usage: &wire.Usage{InputTokens: 5, OutputTokens: 1}},
			{TurnID: "t3", Session: "u", AuthorID: "bob", Provider: "echo"},
		}
		for _, r := range rows {
			if _, err := d.Writer().Do(ctx, func(tx *Tx) error { return tx.RecordUsage(ctx, r) }); err != nil {
				t.Fatal(err)
			}
		}
		got, err := d.UsageTotals(ctx, "provider", time.Now().Add(-time.Hour), 10)
		if err != nil || len(got) != 2 {
			t.Fatalf("by provider: %+v %v", got, err)
		}
		p, echo := got[0], got[1]
		if p.Key != "p" || p.Turns != 2 || p.InputTokens != 105 || p.CachedTokens != 40 || p.Cost == nil || *p.Cost != 0.5 || p.Unpriced != 1 || p.Unreported != 0 {
			t.Fatalf("p: %+v", p)
		}
		if echo.Turns != 1 || echo.Unreported != 1 || echo.InputTokens != 0 || echo.Cost != nil {
			t.Fatalf("echo: %+v", echo)
		}
		if got, _ := d.UsageTotals(ctx, "member", time.Now().Add(-time.Hour), 10); len(got) != 2 || got[0].Key != "ann" {
			t.Fatalf("by member: %+v", got)
		}
		if got, _ := d.UsageTotals(ctx, "day", time.Now().Add(time.Hour), 10); len(got) != 0 {
			t.Fatalf("since later: %+v", got)
		}
	})
}
