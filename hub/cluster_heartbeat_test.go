package hub

import (
	"context"
	"database/sql"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"albedo/db/pgtest"
	"albedo/wire"
)

// A node that cannot read its watched sessions' heads from the store
// warns while it runs; once it is stopping, a read that fails (cut or
// slowed by the stop, or by a store as busy as the machine) is no fault
// to report: nothing waits on it.
func TestAStoppingNodeDoesNotWarnOfHeadsItCannotRead(t *testing.T) {
	t.Parallel()
	srv := pgtest.Shared(t)
	target := srv.Database(t)
	var logged lockedBuffer
	h, err := Open(context.Background(), target, Options{Node: "a", changesEvery: time.Hour, heartbeatEvery: time.Hour}, slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	mustCreate(t, h, "s")
	c := h.Connect(ConnInfo{Name: "t"})
	t.Cleanup(c.Close)
	subscribe(c, wire.Sub{Session: "s"})

	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	admin, err := sql.Open("pgx", srv.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	allow := func(yes bool) {
		t.Helper()
		if _, err := admin.Exec("ALTER DATABASE " + name + " WITH ALLOW_CONNECTIONS " + strconv.FormatBool(yes)); err != nil {
			t.Fatal(err)
		}
		if !yes {
			if _, err := admin.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name); err != nil {
				t.Fatal(err)
			}
		}
	}
	allow(false)
	defer allow(true) // for the hub's Close and the database's removal

	h.reconcileHeads()
	running := strings.Count(logged.String(), "re-read heads")
	if running != 1 {
		t.Fatalf("a running node that cannot read heads warned %d times:\n%s", running, logged.String())
	}
	h.Stopping()
	h.reconcileHeads()
	if n := strings.Count(logged.String(), "re-read heads"); n != running {
		t.Fatalf("a stopping node warned of heads it could not read:\n%s", logged.String())
	}
}
