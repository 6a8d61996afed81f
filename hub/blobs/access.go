package blobs

import (
	"context"
	"errors"

	"albedo/db"
	"albedo/hub/access"
	"albedo/wire"
)

// Who names p as an uploader: its author id, or, for a link, the link
// itself, so that what a guest uploads is the link's.
func Who(p access.Principal) string {
	if p.MemberID == "" && p.TokenID != "" && (p.Role == wire.TokenGuest || p.Role == wire.TokenViewer) {
		return "token:" + p.TokenID
	}
	return p.AuthorID()
}

// Readable returns a blob p may read: one p uploaded, or one that the log
// of a session p may read carries. Anything else, the blobs p may not
// read among them, is db.ErrNotFound, so that a hash cannot be probed.
func (s *Store) Readable(ctx context.Context, p access.Principal, sum string) (db.Blob, error) {
	b, err := s.db.Blob(ctx, sum)
	if err != nil {
		return db.Blob{}, err
	}
	if ok, err := s.db.BlobUploadedBy(ctx, sum, Who(p)); err != nil || ok {
		return b, err
	}
	seen := false
	if err := s.db.BlobSessions(ctx, sum, func(session string) bool {
		seen = p.CanSee(session)
		return !seen
	}); err != nil {
		return db.Blob{}, err
	}
	if !seen {
		return db.Blob{}, db.ErrNotFound
	}
	return b, nil
}

// Resolve checks the attachments an input names (wire.CheckAttachments)
// and fills in each one's type and size, and a name where it has none.
// Each must be a blob p may read: attaching one is no way to read it.
func (s *Store) Resolve(ctx context.Context, p access.Principal, as []wire.Attachment) ([]wire.Attachment, error) {
	if len(as) == 0 {
		return nil, nil
	}
	if werr := wire.CheckAttachments(as); werr != nil {
		return nil, werr
	}
	out := make([]wire.Attachment, len(as))
	for i, a := range as {
		b, err := s.Readable(ctx, p, a.SHA256)
		if errors.Is(err, db.ErrNotFound) {
			return nil, wire.Errorf(wire.CodeBadRequest, "attachments[%d]: no blob %s (PUT /v1/blobs/%s first)", i, a.SHA256, a.SHA256)
		}
		if err != nil {
			return nil, err
		}
		if a.Name == "" {
			a.Name = a.SHA256[:12] + Extension(b.MIME)
		}
		a.MIME, a.Size = b.MIME, b.Size
		out[i] = a
	}
	return out, nil
}
