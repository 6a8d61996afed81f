package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"albedo/client"
	"albedo/wire"
)

// exportAll writes every session the caller may read into dir, a file
// each in format (exportFileName), and the files their messages carry
// beside each (NAME.blobs, where import looks) or all into blobs. A
// session that fails is said on stderr and the others go on; the count
// written is printed.
func exportAll(ctx context.Context, g *globals, dir, format, blobs string) error {
	c, err := g.client(ctx)
	if err != nil {
		return err
	}
	ss, err := c.Sessions(ctx)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	short := shortIDs(ss)
	written := 0
	for _, s := range ss {
		name := exportFileName(s, short[s.ID], format)
		if err := exportFile(ctx, c, s, format, filepath.Join(dir, name), blobs); err != nil {
			if ctx.Err() != nil {
				return err
			}
			printf(g.stderr, "albedo export: session %s (%s): %s\n", short[s.ID], titleOr(s, "untitled"), describe(err))
			continue
		}
		written++
	}
	printf(g.stdout, "wrote %d of %d sessions to %s\n", written, len(ss), dir)
	if written < len(ss) {
		return fmt.Errorf("%d sessions could not be exported", len(ss)-written)
	}
	return nil
}

// exportFile writes s to path (through a temporary file, so that a failed
// export leaves no half file), and its files into blobs, else into
// path's NAME.blobs when it carries any.
func exportFile(ctx context.Context, c *client.Client, s wire.Session, format, path, blobs string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	err = exportOne(ctx, c, s, format, w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if blobs == "" {
		blobs = strings.TrimSuffix(path, filepath.Ext(path)) + ".blobs"
	}
	if err := exportBlobs(ctx, c, s, blobs); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// exportFileName is a file name for s that any file system takes: its
// title's letters and digits, the rest as single dashes, at most 60
// bytes of it ("session" for none), then its short id and format:
// "weekly-plans-0039d669.md".
func exportFileName(s wire.Session, short, format string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s.Title) {
		ok := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case ok && b.Len()+len(string(r)) > 60:
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	stem := strings.Trim(b.String(), "-")
	if stem == "" {
		stem = "session"
	}
	return stem + "-" + short + "." + format
}
