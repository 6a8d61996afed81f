// Package migrations holds the numbered SQL files of the albedo schema,
// embedded in the binary and discovered by bun/migrate: SQLite's in this
// directory, PostgreSQL's in postgres/ (a set of its own: BIGINT offsets,
// no WITHOUT ROWID, no json_extract). A file's statements never change
// once it has landed (bun/migrate knows a migration by its name only, so
// a database that applied it would never see the change; its comments
// may, to stay true); a change to the schema is a new number, in both
// sets.
package migrations
