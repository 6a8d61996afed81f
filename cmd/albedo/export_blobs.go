package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"albedo/client"
	"albedo/wire"
)

// exportBlobs writes each file s's events carry into dir, named by its
// sha256, a file at a time as it streams; one there already is kept. It
// makes dir when there is a file to write.
func exportBlobs(ctx context.Context, c *client.Client, s wire.Session, dir string) error {
	return c.AllEvents(ctx, s.ID, func(_ json.RawMessage, ev wire.Event) error {
		for _, a := range ev.Attachments {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			if err := exportBlob(ctx, c, a.SHA256, dir); err != nil {
				return fmt.Errorf("file %q (%s): %w", a.Name, a.SHA256, err)
			}
		}
		return nil
	})
}

func exportBlob(ctx context.Context, c *client.Client, sum, dir string) error {
	if !wire.ValidSHA256(sum) {
		return fmt.Errorf("not a sha256")
	}
	path := filepath.Join(dir, sum)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	tmp, err := os.CreateTemp(dir, "."+sum+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := c.GetBlob(ctx, sum, tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// importBlobs uploads the files ev carries from dir, each once (done
// holds those sent); a file dir lacks must be one the daemon holds.
func importBlobs(ctx context.Context, c *client.Client, dir string, ev wire.Event, done map[string]bool) error {
	for _, a := range ev.Attachments {
		if done[a.SHA256] || !wire.ValidSHA256(a.SHA256) {
			continue // a bad hash is the import's to refuse
		}
		path := filepath.Join(dir, a.SHA256)
		_, err := os.Stat(path)
		switch {
		case dir != "" && err == nil:
			if _, err := c.PutFile(ctx, path); err != nil {
				return err
			}
		case dir == "" || errors.Is(err, fs.ErrNotExist):
			if _, err := c.HeadBlob(ctx, a.SHA256); err != nil {
				return usageErrorf("the export's file %q (%s) is not in %s nor held by the daemon: give --blobs, the directory of albedo export --blobs", a.Name, a.SHA256, cmp.Or(dir, "no --blobs directory"))
			}
		default:
			return err
		}
		done[a.SHA256] = true
	}
	return nil
}
