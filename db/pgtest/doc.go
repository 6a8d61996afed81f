// Package pgtest runs a private PostgreSQL server for a test package, from
// the machine's own binaries (Debian's /usr/lib/postgresql/N/bin): initdb
// into a temporary directory, pg_ctl on a free loopback port with a
// private socket directory, durability off (fsync, synchronous_commit,
// full_page_writes) since nothing outlives the test. One server serves the
// whole package; each test takes a database of its own from it.
//
// initdb refuses to run as root, and CI machines run as root: there the
// server runs as the postgres user (runuser), its directory owned by it.
package pgtest
