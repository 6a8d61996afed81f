package db

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestReadersMapTheStore: a reader reads the store's file, and the search
// index's, through a mapping (readerMmap), not a pread and a copy into a
// cache of its own. The pragma must hold on both schemas, and a read must
// leave the store's file mapped in this process.
func TestReadersMapTheStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "albedo.db")
	d := openOn(t, path, Options{})
	ctx := context.Background()
	createSession(t, d, "s")
	// The pages go from the WAL into the file, where a reader maps them.
	if _, err := d.ckpt.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	conn, err := d.ro.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, schema := range []string{"main", "search"} {
		var n int64
		if err := conn.QueryRowContext(ctx, "PRAGMA "+schema+".mmap_size").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != readerMmap {
			t.Errorf("%s.mmap_size = %d, want %d", schema, n, readerMmap)
		}
	}
	var id string
	if err := conn.QueryRowContext(ctx, `SELECT id FROM sessions WHERE id = 's'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "linux" {
		return
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(maps), path+"\n") {
		t.Errorf("after a read, %s is not mapped in this process", path)
	}
}
