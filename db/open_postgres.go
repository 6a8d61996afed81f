package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"albedo/migrations"
)

// pgPoolSize is the PostgreSQL connections one daemon opens: the writer
// holds one for a batch, lease work (runs.go) one at a time, and the
// rest serve reads (history pages, catch-up after a restart).
const pgPoolSize = 16

// pgMigrationLock is the advisory lock key that serialises the migrations
// of nodes starting at once ("albedo" in ASCII).
const pgMigrationLock = 0x616c6265646f

// openPostgres opens a PostgreSQL database shared with other daemons.
// What SQLite needs and PostgreSQL does not (pragmas, checkpoints, a
// one-connection writer) is left out; the writer takes each batch's heads
// from the session rows it locks instead of its memory (Writer.shared).
func openPostgres(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", RedactURL(url), err)
	}
	sqldb := sql.OpenDB(literalConnector{stdlib.GetConnector(*cfg)})
	sqldb.SetMaxOpenConns(pgPoolSize)
	sqldb.SetMaxIdleConns(pgPoolSize)
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	bdb := bun.NewDB(sqldb, pgdialect.New())
	if err := bdb.PingContext(ctx); err != nil {
		bdb.Close()
		return nil, fmt.Errorf("connect to %s: %w", RedactURL(url), err)
	}
	applied, err := migratePostgres(ctx, bdb, !opts.NoMigrate)
	if err != nil {
		bdb.Close()
		return nil, err
	}
	legacy, err := hasLegacyPosts(ctx, bdb)
	if err != nil {
		bdb.Close()
		return nil, err
	}
	d := &DB{path: RedactURL(url), dialect: &dialect{pg: true}, rw: bdb, ro: bdb, migrated: applied}
	d.w = newWriter(bdb, d.dialect, opts, legacy, 0)
	return d, nil
}

// literalConnector connects as pgx's database/sql driver does, but its
// connections send a query without parameters as it is, in one round
// trip (literalConn).
type literalConnector struct{ driver.Connector }

func (c literalConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &literalConn{Conn: dc.(*stdlib.Conn)}, nil
}

// literalConn is a pgx connection whose queries without parameters are
// not prepared. pgx prepares and caches every query it has not seen, so
// that the next one costs a round trip, not two; bun writes its values
// into the SQL text, so that nearly every query of its is one never seen
// again (a session's grants, a heartbeat's heads), and each cost a round
// trip to prepare, one to run, and later one to deallocate what it
// evicted from the cache, the statements worth keeping among them. pgx
// already sends a statement without parameters as it is (Exec).
//
// While a batch's transaction holds the connection, first sends what the
// batch queued on it (batchTx) before any statement of its own runs:
// whatever runs next sees those rows, as it would have had they gone at
// once.
type literalConn struct {
	*stdlib.Conn
	first func(context.Context, *pgx.Conn) error
}

// asIs makes pgx run a query in one round trip, without preparing it.
var asIs = []driver.NamedValue{{Ordinal: 1, Value: pgx.QueryExecModeExec}}

func (c *literalConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if err := c.sendFirst(ctx); err != nil {
		return nil, err
	}
	if len(args) == 0 {
		args = asIs
	}
	return c.Conn.QueryContext(ctx, query, args)
}

func (c *literalConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if err := c.sendFirst(ctx); err != nil {
		return nil, err
	}
	return c.Conn.ExecContext(ctx, query, args)
}

func (c *literalConn) sendFirst(ctx context.Context) error {
	if c.first == nil {
		return nil
	}
	return c.first(ctx, c.Conn.Conn())
}

// migratePostgres applies PostgreSQL's migration set (or, unless apply,
// checks that none is pending), holding an advisory lock meanwhile so
// that nodes started together migrate one at a time (bun's own migration
// lock fails instead of waiting).
func migratePostgres(ctx context.Context, bdb *bun.DB, apply bool) ([]string, error) {
	conn, err := bdb.DB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, pgMigrationLock); err != nil {
		return nil, fmt.Errorf("migrate: wait for other nodes: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, pgMigrationLock)
	return migrateApply(ctx, bdb, migrations.NewPostgres, apply)
}
