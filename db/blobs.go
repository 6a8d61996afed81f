package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"albedo/wire"
)

// Blobs (migration blobs): files stored by their sha256, their bytes in
// chunks of BlobChunk. An upload writes its chunks under an upload id,
// each chunk a write request of its own, so that a large file never holds
// the writer long nor sits whole in memory; FinishUpload then makes the
// blob in one transaction, which is the moment it exists. What a crash
// leaves of an upload is swept (SweepBlobs).

// BlobChunk is the length of a blob's chunks, all but its last.
const BlobChunk = 256 << 10

// Blob is a stored blob.
type Blob struct {
	SHA256    string
	Upload    string // the id its chunks are stored under
	Size      int64
	MIME      string
	Chunk     int // the length of its chunks
	CreatedAt string
}

// StartUpload records an upload about to write its chunks, so that the
// sweep can find them if it never finishes.
func (t *Tx) StartUpload(ctx context.Context, upload string) error {
	if _, err := t.sql.ExecContext(ctx, t.bind(`INSERT INTO blob_uploads (upload, started_at) VALUES (?, ?)`), upload, formatTime(t.now)); err != nil {
		return fmt.Errorf("start upload: %w", err)
	}
	return nil
}

// PutChunk stores chunk seq (from 0) of an upload.
func (t *Tx) PutChunk(ctx context.Context, upload string, seq int, data []byte) error {
	if _, err := t.sql.ExecContext(ctx, t.bind(`INSERT INTO blob_chunks (upload, seq, data) VALUES (?, ?, ?)`), upload, seq, data); err != nil {
		return fmt.Errorf("store chunk %d: %w", seq, err)
	}
	return nil
}

// FinishUpload makes the blob b of the upload b.Upload, whose chunks are
// stored and whose bytes the caller hashed, and records who uploaded it.
// If the store already holds the blob (another upload finished first),
// this upload's chunks go, and created is false.
func (t *Tx) FinishUpload(ctx context.Context, b Blob, who string) (created bool, _ error) {
	res, err := t.sql.ExecContext(ctx, t.bind(`INSERT INTO blobs (sha256, upload, size, mime, chunk, created_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (sha256) DO NOTHING`), b.SHA256, b.Upload, b.Size, b.MIME, b.Chunk, formatTime(t.now))
	if err != nil {
		return false, fmt.Errorf("finish upload: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("finish upload: %w", err)
	}
	if n == 0 {
		if err := t.dropChunks(ctx, b.Upload); err != nil {
			return false, err
		}
	}
	if _, err := t.sql.ExecContext(ctx, t.bind(`DELETE FROM blob_uploads WHERE upload = ?`), b.Upload); err != nil {
		return false, fmt.Errorf("finish upload: %w", err)
	}
	return n == 1, t.AddUploader(ctx, b.SHA256, who)
}

// AbandonUpload drops an upload that will not finish, and its chunks.
func (t *Tx) AbandonUpload(ctx context.Context, upload string) error {
	if err := t.dropChunks(ctx, upload); err != nil {
		return err
	}
	if _, err := t.sql.ExecContext(ctx, t.bind(`DELETE FROM blob_uploads WHERE upload = ?`), upload); err != nil {
		return fmt.Errorf("abandon upload: %w", err)
	}
	return nil
}

func (t *Tx) dropChunks(ctx context.Context, upload string) error {
	if _, err := t.sql.ExecContext(ctx, t.bind(`DELETE FROM blob_chunks WHERE upload = ?`), upload); err != nil {
		return fmt.Errorf("drop chunks: %w", err)
	}
	return nil
}

// AddUploader records that who uploaded a blob (or proved holding its
// bytes), which lets them read it before any message carries it.
func (t *Tx) AddUploader(ctx context.Context, sha256, who string) error {
	if _, err := t.sql.ExecContext(ctx, t.bind(`INSERT INTO blob_uploaders (sha256, who) VALUES (?, ?) ON CONFLICT (sha256, who) DO NOTHING`), sha256, who); err != nil {
		return fmt.Errorf("record uploader: %w", err)
	}
	return nil
}

// Blob reads a blob's row, or ErrNotFound.
func (d *DB) Blob(ctx context.Context, sha256 string) (Blob, error) {
	b := Blob{SHA256: sha256}
	err := d.ro.DB.QueryRowContext(ctx, d.dialect.bind(`SELECT upload, size, mime, chunk, created_at FROM blobs WHERE sha256 = ?`), sha256).
		Scan(&b.Upload, &b.Size, &b.MIME, &b.Chunk, &b.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return Blob{}, fmt.Errorf("blob %s: %w", sha256, ErrNotFound)
	}
	if err != nil {
		return Blob{}, fmt.Errorf("blob %s: %w", sha256, err)
	}
	return b, nil
}

// BlobChunk reads chunk seq of a blob's bytes.
func (d *DB) BlobChunk(ctx context.Context, b Blob, seq int) ([]byte, error) {
	var data []byte
	err := d.ro.DB.QueryRowContext(ctx, d.dialect.bind(`SELECT data FROM blob_chunks WHERE upload = ? AND seq = ?`), b.Upload, seq).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("blob %s chunk %d: %w", b.SHA256, seq, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("blob %s chunk %d: %w", b.SHA256, seq, err)
	}
	return data, nil
}

// BlobUploadedBy says whether who uploaded a blob.
func (d *DB) BlobUploadedBy(ctx context.Context, sha256, who string) (bool, error) {
	var n int
	err := d.ro.DB.QueryRowContext(ctx, d.dialect.bind(`SELECT COUNT(*) FROM blob_uploaders WHERE sha256 = ? AND who = ?`), sha256, who).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("blob uploader: %w", err)
	}
	return n > 0, nil
}

// BlobSessions calls fn with each session whose log carries a blob, until
// fn returns false; one row at a time, however many there are.
func (d *DB) BlobSessions(ctx context.Context, sha256 string, fn func(session string) bool) error {
	rows, err := d.ro.DB.QueryContext(ctx, d.dialect.bind(`SELECT session FROM blob_refs WHERE sha256 = ?`), sha256)
	if err != nil {
		return fmt.Errorf("blob sessions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return fmt.Errorf("blob sessions: %w", err)
		}
		if !fn(s) {
			return nil
		}
	}
	return rows.Err()
}

// refBlobs records that session's log carries the attachments of evs
// from their offsets on.
func (t *Tx) refBlobs(ctx context.Context, session string, evs []wire.Event, first int64) error {
	for i, ev := range evs {
		for _, a := range ev.Attachments {
			if _, err := t.sql.ExecContext(ctx, t.bind(`INSERT INTO blob_refs (session, sha256, "offset") VALUES (?, ?, ?)
				ON CONFLICT (session, sha256) DO NOTHING`), session, a.SHA256, first+int64(i)); err != nil {
				return fmt.Errorf("reference blob: %w", err)
			}
		}
	}
	return nil
}

// forkBlobRefs gives a fork the blobs its parent's log carries up to the
// fork point.
func (t *Tx) forkBlobRefs(ctx context.Context, parent, child string, at int64) error {
	if _, err := t.sql.ExecContext(ctx, t.bind(`INSERT INTO blob_refs (session, sha256, "offset")
		SELECT ?, sha256, "offset" FROM blob_refs WHERE session = ? AND "offset" <= ?`), child, parent, at); err != nil {
		return fmt.Errorf("fork blob references: %w", err)
	}
	return nil
}

// deleteBlobRefs forgets a deleted session's blobs; the sweep removes
// those no other session carries.
func (t *Tx) deleteBlobRefs(ctx context.Context, session string) error {
	if _, err := t.sql.ExecContext(ctx, t.bind(`DELETE FROM blob_refs WHERE session = ?`), session); err != nil {
		return fmt.Errorf("delete blob references: %w", err)
	}
	return nil
}

// SweepBlobs removes at most limit blobs that no session's log carries
// and that were made before unused, and at most limit uploads started
// before stale that never finished (a crash cut them short), with their
// chunks. It returns how many of each it removed.
func (t *Tx) SweepBlobs(ctx context.Context, unused, stale time.Time, limit int) (blobs, uploads int, _ error) {
	var gone []string // uploads whose chunks go
	rows, err := t.sql.QueryContext(ctx, t.bind(`SELECT sha256, upload FROM blobs b WHERE created_at < ?
		AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.sha256 = b.sha256) LIMIT ?`), formatTime(unused), limit)
	if err != nil {
		return 0, 0, fmt.Errorf("sweep blobs: %w", err)
	}
	var shas []string
	for rows.Next() {
		var sha, up string
		if err := rows.Scan(&sha, &up); err != nil {
			rows.Close()
			return 0, 0, fmt.Errorf("sweep blobs: %w", err)
		}
		shas, gone = append(shas, sha), append(gone, up)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("sweep blobs: %w", err)
	}
	for _, sha := range shas {
		for _, q := range []string{`DELETE FROM blobs WHERE sha256 = ?`, `DELETE FROM blob_uploaders WHERE sha256 = ?`} {
			if _, err := t.sql.ExecContext(ctx, t.bind(q), sha); err != nil {
				return 0, 0, fmt.Errorf("sweep blob: %w", err)
			}
		}
	}
	rows, err = t.sql.QueryContext(ctx, t.bind(`SELECT upload FROM blob_uploads WHERE started_at < ? LIMIT ?`), formatTime(stale), limit)
	if err != nil {
		return 0, 0, fmt.Errorf("sweep uploads: %w", err)
	}
	stuck := 0
	for rows.Next() {
		var up string
		if err := rows.Scan(&up); err != nil {
			rows.Close()
			return 0, 0, fmt.Errorf("sweep uploads: %w", err)
		}
		gone, stuck = append(gone, up), stuck+1
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("sweep uploads: %w", err)
	}
	for _, up := range gone {
		if err := t.AbandonUpload(ctx, up); err != nil {
			return 0, 0, err
		}
	}
	return len(shas), stuck, nil
}
