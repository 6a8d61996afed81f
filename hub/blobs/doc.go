// Package blobs is the daemon's store of files: blobs named by their
// sha256, kept in the daemon's database (SQLite for a home, PostgreSQL
// for a cluster) in chunks of db.BlobChunk, so that an upload or a
// download holds one chunk in memory, not the file. A blob exists once
// its bytes hashed as named (db.Tx.FinishUpload): a crash leaves it
// whole or absent. Its type is found in its bytes, never taken from its
// sender, and what a browser could run is served to be downloaded.
//
// Who may read a blob: whoever uploaded it, or proved holding its bytes
// (Who, Store.Claim), and whoever may read a session whose log carries
// it (db blob_refs); anyone else is told it does not exist.
//
// # Files
//
//	doc.go     this overview
//	store.go   Store: Put (streamed, checked, a chunk at a time), Prove, Claim, Open (a ReadSeeker for ranges), Sweep
//	access.go  Who uploads; Readable; Resolve, the attachments an input names checked and filled in
//	mime.go    Sniff (gabriel-vasile/mimetype), Served (what goes inline, what as a download), Extension
//	images.go  Fit: an image within a provider's bounds, scaled by golang.org/x/image; no bomb decoded
package blobs
