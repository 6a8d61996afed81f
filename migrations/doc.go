// Package migrations holds the numbered SQL files of the albedo schema,
// embedded in the binary and discovered by bun/migrate. A file is never
// edited once it has landed; a change to the schema is a new number.
package migrations
