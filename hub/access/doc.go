// Package access is who may do what: the principals that tokens act as,
// the sets of roles the permission tables name (api's for routes, api/ws's
// for ops), the in-memory table of tokens and members' grants, token
// hashing, and the checks of the text fields and ids a client sends. It
// is a leaf: it reads the store's rows (albedo/db) and speaks the
// contract's types (albedo/wire), and the hub, api and api/ws import it.
//
// # Files
//
//	doc.go        this overview
//	principal.go  Principal: Access, CanSee, Authorize; the role sets; Rule
//	table.go      Table: the stored tokens by hash, looked up, added, dropped, reloaded
//	grants.go     members' grants, kept in the Table under its locks
//	tokens.go     tokens made and hashed; the rules for names and labels
//	checks.go     the text fields' limits and NUL rule, canonical UUIDs, efforts
package access
