package walvfs

// #include "walvfs.h"
import "C"

import (
	"fmt"
	"sync"

	// SQLite itself: the shim wraps the VFS it registers.
	_ "github.com/mattn/go-sqlite3"
)

// Name is the VFS a connection names to have its WAL written in batches:
// vfs=albedo-wal in a github.com/mattn/go-sqlite3 DSN.
const Name = C.ALBEDO_WALVFS_NAME

var (
	once   sync.Once
	regErr error
)

// Register makes Name known to SQLite, wrapping its default VFS; it does
// so once, and connections opened before it cannot name it.
func Register() error {
	once.Do(func() {
		if rc := C.albedo_walvfs_register(); rc != 0 {
			regErr = fmt.Errorf("register SQLite VFS %s: code %d", Name, int(rc))
		}
	})
	return regErr
}

// Stats says how many frames the shim has held and how many writes it has
// made to WAL files, its batches and what it wrote through, since the
// process started.
func Stats() (frames, writes uint64) {
	var f, w C.ulonglong
	C.albedo_walvfs_stats(&f, &w)
	return uint64(f), uint64(w)
}

// failFlushes makes the next n writes of held frames fail with
// SQLITE_IOERR_WRITE, as a failing disk would: the package's tests'
// seam, to show what a failed write leaves.
func failFlushes(n int) { C.albedo_walvfs_fail_flushes(C.int(n)) }
