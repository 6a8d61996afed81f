package db

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
)

// dialect is what differs between the two backends in the SQL this package
// writes by hand (bun formats its own queries for either). The statements
// are written once, with SQLite's ? placeholders; PostgreSQL gets them
// rewritten to $1, $2 … once per statement text.
type dialect struct {
	pg    bool
	bound sync.Map // statement → its PostgreSQL form
}

// bind returns q as the backend takes it.
func (d *dialect) bind(q string) string {
	if !d.pg {
		return q
	}
	if b, ok := d.bound.Load(q); ok {
		return b.(string)
	}
	b := numberPlaceholders(q)
	d.bound.Store(q, b)
	return b
}

// numberPlaceholders turns each ? of q into $n. The package's statements
// have no ? inside quotes, so a plain scan does.
func numberPlaceholders(q string) string {
	var b strings.Builder
	b.Grow(len(q) + len(q)/4)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// IsPostgres says whether an Open target names a PostgreSQL database
// rather than a SQLite file.
func IsPostgres(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// pgCode returns the SQLSTATE of a PostgreSQL error, or "".
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// SQLSTATEs this package acts on.
const (
	pgLockNotAvailable    = "55P03" // FOR UPDATE NOWAIT found the row locked
	pgUniqueViolation     = "23505"
	pgForeignKeyViolation = "23503"
)

// RedactURL returns a database URL without its password, for logs and
// errors.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "postgres://…"
	}
	return u.Redacted()
}
