package walvfs

import (
	"database/sql"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// otherProcessEnv names the file TestOtherProcessReads reads, in the
// process TestAnotherProcessCannotOpenTheDaemonsFile starts.
const otherProcessEnv = "ALBEDO_WALVFS_OTHER_PROCESS"

// The shim is over unix-excl: once a connection of this process has read
// the file, another process cannot (it waits out its busy timeout and is
// told the database is locked), while this process's connections, through
// the shim or SQLite's own VFS, read and write it and keep the wal-index
// in memory (no -shm file). Once they close, another process reads it.
func TestAnotherProcessCannotOpenTheDaemonsFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.db")
	db := open(t, path, true)
	exec(t, db, "CREATE TABLE t (v INTEGER)")
	exec(t, db, "INSERT INTO t VALUES (1)")
	plain := open(t, path, false)
	exec(t, plain, "INSERT INTO t VALUES (2)")
	if n := count(t, db, "SELECT count(*) FROM t"); n != 2 {
		t.Fatalf("this process's connections see %d rows, want 2", n)
	}
	if _, err := os.Stat(path + "-shm"); !os.IsNotExist(err) {
		t.Fatalf("a -shm file beside the database (%v): the wal-index is not in memory", err)
	}

	if out := otherProcess(t, path); !strings.Contains(out, "database is locked") {
		t.Fatalf("another process, while this one holds the file: %q, want database is locked", out)
	}
	db.Close()
	plain.Close()
	if out := otherProcess(t, path); out != "rows 2" {
		t.Fatalf("another process, once this one closed the file: %q", out)
	}
}

// otherProcess runs TestOtherProcessReads on path in a process of its
// own and returns what it printed.
func otherProcess(t *testing.T, path string) string {
	t.Helper()
	cmd := osexec.Command(os.Args[0], "-test.run=^TestOtherProcessReads$", "-test.count=1")
	cmd.Env = append(os.Environ(), otherProcessEnv+"="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the other process: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		if s, ok := strings.CutPrefix(line, "other: "); ok {
			return strings.TrimSpace(s)
		}
	}
	t.Fatalf("the other process said nothing:\n%s", out)
	return ""
}

// TestOtherProcessReads is the other process of
// TestAnotherProcessCannotOpenTheDaemonsFile: it reads the file through
// the shim, as a second daemon would, and prints what it got.
func TestOtherProcessReads(t *testing.T) {
	path := os.Getenv(otherProcessEnv)
	if path == "" {
		t.Skip("run by TestAnotherProcessCannotOpenTheDaemonsFile")
	}
	if err := Register(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=200&vfs="+Name)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil {
		fmt.Println("other:", err)
		return
	}
	fmt.Println("other: rows", n)
}
