// Package walvfs is a SQLite VFS shim that writes a transaction's WAL
// frames at once.
//
// SQLite writes each frame it appends to the WAL as two system calls, its
// 24-byte header and then its page, so a commit of n pages is 2n writes.
// Connections that name the VFS (vfs=albedo-wal in the DSN, which package
// db does for every SQLite connection) have their WAL files wrapped: the
// frames a transaction appends are held in a buffer of just under 128 KiB
// and written in one call when its commit frame arrives, when the buffer
// is full, or before anything else is done with the file. A commit is on
// the file before SQLite makes it visible, so what a reader, a checkpoint
// or a crash sees is what SQLite's own VFS would have left. Frames still
// held when the connection gives up the WAL's write lock belong to a
// transaction that rolled back, and are dropped rather than written where
// another connection may have written its own; the shim wraps the
// database file to see that lock. A write of held frames that fails fails
// every later write of the transaction, so it cannot commit without them.
// Every other file is the underlying VFS's own.
//
// The underlying VFS is SQLite's unix-excl: the unix VFS, except that the
// first read of a database takes SQLite's lock on it for this process,
// which keeps every other process's SQLite connections out (an advisory
// lock: it stops no cp), and the connections of this process then keep
// the wal-index in memory and take its locks among themselves. With the
// unix VFS each transaction took those locks with fcntl, four a read and
// six a commit: most of the cost of a read by its key. One daemon owns
// its database, so nothing is lost; another process (SQLite's shell, a
// second daemon given the file) waits out its busy timeout and is told the
// database is locked.
//
// # Files
//
//   - walvfs.go: Register, Name, Stats, and failFlushes, the tests' seam
//     for a disk that fails a write.
//   - walvfs.c: the shim: the VFS; the WAL file's methods, which hold
//     frames and write them; the database file's, which drop a rolled-back
//     transaction's.
//   - walvfs.h: what walvfs.go calls.
//   - sqlite3vfs.h: the declarations of sqlite3.h the shim needs.
package walvfs
