package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"albedo/db"
	"albedo/hub/blobs"
	"albedo/wire"
)

// putBlob stores a blob: PUT /v1/blobs/{sha256} with its bytes. A body
// the store already holds, for a caller who may read it, is not read:
// 200. For anyone else its bytes are read and hashed, not stored, which
// proves they hold it (they may read it from then on), so that the
// answer tells no one without the bytes that the store holds them.
func (s *Server) putBlob(c echo.Context) error {
	sum := c.Param("sha256")
	if !wire.ValidSHA256(sum) {
		return wire.Errorf(wire.CodeBadRequest, "%q is not a sha256: 64 lower-case hex digits", sum)
	}
	st := s.hub.Blobs()
	req := c.Request()
	if req.ContentLength > st.Max() {
		return wire.Errorf(wire.CodeTooLarge, "the body is %d bytes; max_attachment_bytes is %d", req.ContentLength, st.Max())
	}
	pr, _ := principalOf(c)
	ctx := req.Context()
	if b, err := st.Readable(ctx, pr, sum); err == nil {
		return c.JSON(http.StatusOK, wire.BlobInfo{SHA256: sum, Size: b.Size, MIME: b.MIME})
	} else if !errors.Is(err, db.ErrNotFound) {
		return err
	}
	if b, err := st.Get(ctx, sum); err == nil {
		if err := blobErr(st.Prove(ctx, sum, req.Body)); err != nil {
			return err
		}
		if err := st.Claim(ctx, sum, blobs.Who(pr)); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, wire.BlobInfo{SHA256: sum, Size: b.Size, MIME: b.MIME})
	} else if !errors.Is(err, db.ErrNotFound) {
		return err
	}
	info, created, err := st.Put(ctx, sum, req.Header.Get("Content-Type"), req.Body, blobs.Who(pr))
	if err := blobErr(err); err != nil {
		return err
	}
	if !created {
		return c.JSON(http.StatusOK, info)
	}
	return c.JSON(http.StatusCreated, info)
}

// blobErr is a store's refusal of an upload as the contract's error.
func blobErr(err error) error {
	switch {
	case errors.Is(err, blobs.ErrCut), errors.Is(err, context.Canceled):
		return wire.Errorf(wire.CodeBadRequest, "the upload ended before its body did")
	case errors.Is(err, blobs.ErrMismatch):
		return wire.Errorf(wire.CodeBadRequest, "%v", err)
	case errors.Is(err, blobs.ErrTooLarge):
		return wire.Errorf(wire.CodeTooLarge, "%v", err)
	}
	return err
}

// getBlob serves a blob's bytes (GET, HEAD /v1/blobs/{sha256}) to a
// caller who may read it, with its type, an ETag and Range; anyone else
// gets 404, as for a blob that does not exist. A type a browser could run
// goes as application/octet-stream, to be downloaded (blobs.Served), and
// nothing served is sniffed or may run script.
func (s *Server) getBlob(c echo.Context) error {
	sum := c.Param("sha256")
	notFound := wire.Errorf(wire.CodeNotFound, "no blob %s", sum)
	if !wire.ValidSHA256(sum) {
		return notFound
	}
	pr, _ := principalOf(c)
	st := s.hub.Blobs()
	req := c.Request()
	b, err := st.Readable(req.Context(), pr, sum)
	if errors.Is(err, db.ErrNotFound) {
		return notFound
	}
	if err != nil {
		return err
	}
	ctype, inline := blobs.Served(b.MIME)
	name := downloadName(c.QueryParam("name"), sum, b.MIME)
	disp := "attachment"
	if inline {
		disp = "inline"
	}
	h := c.Response().Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Disposition", mime.FormatMediaType(disp, map[string]string{"filename": name}))
	h.Set("ETag", `"`+sum+`"`)
	h.Set("Cache-Control", "private, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'")
	h.Set("X-Albedo-Mime", b.MIME)
	created, _ := time.Parse(time.RFC3339Nano, b.CreatedAt)
	http.ServeContent(c.Response(), req, "", created, st.Open(req.Context(), b, 0, b.Size))
	return nil
}

// downloadName is the file name a blob is served under: the one the
// caller asks for (an attachment's), checked as an attachment's name is,
// else its hash's start and an extension for its type.
func downloadName(asked, sum, mimeType string) string {
	asked = strings.TrimSpace(asked)
	if asked != "" && wire.CheckAttachments([]wire.Attachment{{SHA256: sum, Name: asked}}) == nil {
		return asked
	}
	return fmt.Sprintf("%s%s", sum[:12], blobs.Extension(mimeType))
}

var _ io.ReadSeeker = (*blobs.Reader)(nil)
