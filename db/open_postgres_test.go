package db

import (
	"context"
	"fmt"
	"testing"

	"albedo/db/pgtest"
)

// bun's queries, whose values are in their text, are not prepared on
// PostgreSQL: a hundred of them leave no statement behind on their
// connection, where each was one (and, past pgx's cache, evicted one
// worth keeping). A query with parameters still is, once.
func TestQueriesWithoutParametersAreNotPrepared(t *testing.T) {
	t.Parallel()
	d := openOn(t, pgtest.Shared(t).Database(t), Options{})
	ctx := context.Background()
	conn, err := d.ro.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	prepared := func() int {
		t.Helper()
		var n int
		if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM pg_prepared_statements WHERE statement NOT LIKE '%pg_prepared_statements%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := prepared()
	for i := range 100 {
		var ids []string
		if err := conn.NewSelect().Table("sessions").Column("id").Where("id = ?", fmt.Sprintf("s%d", i)).Scan(ctx, &ids); err != nil {
			t.Fatal(err)
		}
	}
	if n := prepared(); n != before {
		t.Errorf("%d statements prepared by 100 queries without parameters, want none", n-before)
	}
	for range 3 {
		var n int
		if err := conn.Conn.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE id = $1`, "x").Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	if n := prepared(); n != before+1 {
		t.Errorf("%d statements prepared by one query with a parameter, run 3 times; want 1", n-before)
	}
}
