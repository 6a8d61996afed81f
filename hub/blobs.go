package hub

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"albedo/hub/access"
	"albedo/hub/blobs"
	"albedo/hub/mcphost"
	"albedo/hub/provider"
	"albedo/wire"
)

// The hub's seam to files (albedo/hub/blobs): the store, the attachments
// an input names resolved against it, and the sweep of blobs no session
// carries.

// Blobs is the daemon's store of files.
func (h *Hub) Blobs() *blobs.Store { return h.blobs }

// Attachments resolves the attachments an input names for p: each a blob
// p may read, with its type and size (blobs.Store.Resolve).
func (h *Hub) Attachments(ctx context.Context, p access.Principal, as []wire.Attachment) ([]wire.Attachment, error) {
	out, err := h.blobs.Resolve(ctx, p, as)
	if err != nil {
		return nil, wireErr(err)
	}
	return out, nil
}

// How the sweep paces itself: a blob no session carries goes once it is
// blobUnused old, so that an upload waits a while for its message; an
// upload a crash cut short goes after blobStale.
const (
	sweepEvery = time.Hour
	blobUnused = 24 * time.Hour
	blobStale  = time.Hour
	sweepLimit = 256
)

// sweepBlobs removes, every sweepEvery, what no session needs any more.
func (h *Hub) sweepBlobs() {
	defer h.loops.Done()
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		}
		for {
			blobs, uploads, err := h.blobs.Sweep(h.ctx, blobUnused, blobStale, sweepLimit)
			if err != nil {
				if h.ctx.Err() == nil {
					h.log.Warn("sweep blobs", "err", err)
				}
				break
			}
			if blobs > 0 || uploads > 0 {
				h.log.Info("swept blobs", "blobs", blobs, "uploads", uploads)
			}
			if blobs < sweepLimit && uploads < sweepLimit {
				break
			}
		}
	}
}

// keepFiles stores the files a tool's result carried (an MCP server's
// images, audio, resources' bytes) as blobs uploaded by who, and returns
// them as the result's attachments. What cannot be kept (past
// max_attachment_bytes or wire.MaxAttachments, or a store that failed)
// is a note in the output instead, with why.
func (h *Hub) keepFiles(ctx context.Context, who string, files []mcphost.File) ([]wire.Attachment, string) {
	var out []wire.Attachment
	var notes strings.Builder
	leftOut := func(f mcphost.File, why string) {
		fmt.Fprintf(&notes, "\n[%s (%s, %d bytes) was left out: %s]", f.What, cmp.Or(f.MIME, "of no stated type"), len(f.Data), why)
	}
	seen := map[string]bool{}
	for i, f := range files {
		if len(out) == wire.MaxAttachments {
			leftOut(f, fmt.Sprintf("a result carries at most %d files", wire.MaxAttachments))
			continue
		}
		sum := sha256.Sum256(f.Data)
		hash := hex.EncodeToString(sum[:])
		if seen[hash] {
			continue // the same bytes again: carried once
		}
		info, _, err := h.blobs.Put(ctx, hash, f.MIME, bytes.NewReader(f.Data), who)
		switch {
		case errors.Is(err, blobs.ErrTooLarge):
			leftOut(f, fmt.Sprintf("it passes max_attachment_bytes (%d)", h.blobs.Max()))
			continue
		case err != nil:
			h.log.Warn("keep a tool's file", "who", who, "err", err)
			leftOut(f, "the daemon could not store it")
			continue
		}
		seen[hash] = true
		name := f.Name
		if name == "" || wire.CheckAttachments([]wire.Attachment{{SHA256: hash, Name: name}}) != nil {
			name = fmt.Sprintf("%s-%d%s", fileKind(info.MIME), i+1, blobs.Extension(info.MIME))
		}
		out = append(out, wire.Attachment{SHA256: hash, Name: name, MIME: info.MIME, Size: info.Size})
	}
	return out, notes.String()
}

// fileKind is a word for a file of type t, to name it by.
func fileKind(t string) string {
	switch {
	case strings.HasPrefix(t, "image/"):
		return "image"
	case strings.HasPrefix(t, "audio/"):
		return "audio"
	}
	return "file"
}

// filesOf are a message's attachments as a provider's files, named only:
// loadFiles reads what goes of them.
func filesOf(as []wire.Attachment) []provider.File {
	if len(as) == 0 {
		return nil
	}
	out := make([]provider.File, len(as))
	for i, a := range as {
		out[i] = provider.File{SHA256: a.SHA256, Name: a.Name, MIME: a.MIME, Size: a.Size}
	}
	return out
}

// fileNames names a message's files, for a summary's reader.
func fileNames(as []wire.Attachment) string {
	var b strings.Builder
	for _, a := range as {
		fmt.Fprintf(&b, "\n[file %q, %s, %d bytes]", a.Name, a.MIME, a.Size)
	}
	return b.String()
}

// loadFiles reads, newest message first, what goes of each file of msgs
// to p: the newest provider.MaxImagesPerRequest images of people's and
// bots' messages, scaled to p's bounds, if p takes images; the start of
// each text file, within provider.MaxFilesText in all. The rest are
// named, with why (provider.File.Note).
func (h *Hub) loadFiles(ctx context.Context, p provider.Provider, msgs []provider.Message) {
	im, takes := p.(provider.Images)
	images, text := 0, provider.MaxFilesText
	for i := len(msgs) - 1; i >= 0; i-- {
		m := &msgs[i]
		for j := range m.Files {
			f := &m.Files[j]
			switch {
			case wire.IsImageType(f.MIME) && takes && m.Role != wire.RoleAssistant && m.Role != provider.RoleTool:
				if images == provider.MaxImagesPerRequest {
					f.Why = "an older image, not sent again"
					continue
				}
				if err := h.loadImage(ctx, f, im.ImageBounds()); err != nil {
					f.Why = err.Error()
					continue
				}
				images++
			case wire.IsTextType(f.MIME):
				if text <= 0 {
					f.Why = "no room is left for its text"
					continue
				}
				if err := h.loadText(ctx, f, min(text, provider.MaxFileText)); err != nil {
					f.Why = err.Error()
					continue
				}
				text -= len(f.Text)
			}
		}
	}
}

// loadImage reads an image file's bytes, fitted to b.
func (h *Hub) loadImage(ctx context.Context, f *provider.File, b provider.ImageBounds) error {
	blob, err := h.blobs.Get(ctx, f.SHA256)
	if err != nil {
		return errors.New("its bytes are gone")
	}
	data, err := h.blobs.ReadAll(ctx, blob)
	if err != nil {
		return errors.New("its bytes could not be read")
	}
	if f.Image, f.ImageMIME, err = blobs.Fit(data, blob.MIME, b.MaxEdge, b.MaxBytes); err != nil {
		h.log.Warn("an attached image does not go to the provider", "sha256", f.SHA256, "err", err)
		return errors.New("it does not decode as an image")
	}
	return nil
}

// loadText reads the start of a text file, at most n bytes, cut on a
// character's boundary.
func (h *Hub) loadText(ctx context.Context, f *provider.File, n int) error {
	blob, err := h.blobs.Get(ctx, f.SHA256)
	if err != nil {
		return errors.New("its bytes are gone")
	}
	b, err := io.ReadAll(h.blobs.Open(ctx, blob, 0, int64(n)))
	if err != nil {
		return errors.New("its bytes could not be read")
	}
	text := string(b)
	if int64(len(b)) < blob.Size {
		// Cut where a character ends, not inside one.
		for k := 0; k < utf8.UTFMax-1 && text != ""; k++ {
			if r, size := utf8.DecodeLastRuneInString(text); r != utf8.RuneError || size != 1 {
				break
			}
			text = text[:len(text)-1]
		}
	}
	f.Text, f.Cut = text, int64(len(b)) < blob.Size
	return nil
}
