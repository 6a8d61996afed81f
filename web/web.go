package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var files embed.FS

// Static holds index.html and the assets beside it.
var Static = mustSub(files, "static")

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // a constant directory: only a broken build gets here
	}
	return sub
}
