package blobs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"

	"albedo/db"
	"albedo/wire"
)

// Store keeps blobs in the daemon's store, a chunk at a time.
type Store struct {
	db  *db.DB
	max int64
}

// New returns the blobs of d, each at most max bytes
// (wire.DefaultMaxAttachmentBytes for 0).
func New(d *db.DB, max int64) *Store {
	if max <= 0 {
		max = wire.DefaultMaxAttachmentBytes
	}
	return &Store{db: d, max: max}
}

// Max is the largest blob the store takes, in bytes.
func (s *Store) Max() int64 { return s.max }

// Errors of Put, each a client's mistake.
var (
	// ErrMismatch: the bytes do not hash to the name they were sent
	// under, or are not as long as said.
	ErrMismatch = errors.New("the body's sha256 differs from the one named")
	// ErrTooLarge: the bytes pass the store's limit.
	ErrTooLarge = errors.New("the body passes max_attachment_bytes")
	// ErrCut: the body could not be read to its end (the client went).
	ErrCut = errors.New("the body ended before it was whole")
)

// Get returns a blob's row, or db.ErrNotFound.
func (s *Store) Get(ctx context.Context, sum string) (db.Blob, error) { return s.db.Blob(ctx, sum) }

// Put stores the bytes of r as the blob named sum, with declared as the
// type its sender said (checked against the bytes, never taken as is),
// for who. It reads r a chunk at a time: at most inFlight chunks of it
// are in memory. It returns the blob as stored, and whether it is new: a blob
// another upload finished meanwhile is kept, this one's chunks dropped.
// A body that does not hash to sum is ErrMismatch, one longer than the
// store's limit ErrTooLarge; either way nothing stays.
func (s *Store) Put(ctx context.Context, sum, declared string, r io.Reader, who string) (wire.BlobInfo, bool, error) {
	upload := uuid.Must(uuid.NewV7()).String()
	w := s.db.Writer()
	if _, err := w.Do(ctx, func(tx *db.Tx) error { return tx.StartUpload(ctx, upload) }); err != nil {
		return wire.BlobInfo{}, false, err
	}
	finished := false
	defer func() {
		if !finished {
			// Whatever went wrong, the chunks go now: the sweep would
			// find them, but only after a while.
			bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			_, _ = w.Do(bg, func(tx *db.Tx) error { return tx.AbandonUpload(bg, upload) })
		}
	}()
	h := sha256.New()
	size, mime, err := s.putChunks(ctx, upload, declared, r, h)
	if err != nil {
		return wire.BlobInfo{}, false, err
	}
	if hex.EncodeToString(h.Sum(nil)) != sum {
		return wire.BlobInfo{}, false, ErrMismatch
	}
	b := db.Blob{SHA256: sum, Upload: upload, Size: size, MIME: mime, Chunk: db.BlobChunk}
	var created bool
	if _, err := w.Do(ctx, func(tx *db.Tx) (err error) { created, err = tx.FinishUpload(ctx, b, who); return err }); err != nil {
		return wire.BlobInfo{}, false, err
	}
	finished = true
	if !created {
		if old, err := s.db.Blob(ctx, sum); err == nil {
			b = old
		}
	}
	return wire.BlobInfo{SHA256: sum, Size: b.Size, MIME: b.MIME}, created, nil
}

// Prove reads r, which should be the bytes of the blob sum, and hashes
// them without storing them: ErrMismatch if they are not, ErrTooLarge
// past the store's limit.
func (s *Store) Prove(ctx context.Context, sum string, r io.Reader) error {
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(r, s.max+1))
	switch {
	case err != nil:
		return fmt.Errorf("%w: %v", ErrCut, err)
	case n > s.max:
		return ErrTooLarge
	case hex.EncodeToString(h.Sum(nil)) != sum:
		return ErrMismatch
	}
	return nil
}

// inFlight is how many chunks of one upload wait for their commit at once:
// the next is read while the last is written, and no more is held.
const inFlight = 2

// putChunks stores r's bytes under upload, a chunk at a time, with at
// most inFlight of them in memory, hashing them into h; it returns their
// length and the type sniffed from the first chunk.
func (s *Store) putChunks(ctx context.Context, upload, declared string, r io.Reader, h io.Writer) (size int64, mime string, err error) {
	w := s.db.Writer()
	var bufs [inFlight][]byte
	var pending [inFlight]*db.Pending
	defer func() {
		// Every chunk's write is answered before its buffer is let go.
		for _, p := range pending {
			if p != nil {
				if _, werr := p.Wait(); werr != nil && err == nil {
					err = werr
				}
			}
		}
	}()
	for seq := 0; ; seq++ {
		k := seq % inFlight
		if pending[k] != nil {
			p := pending[k]
			pending[k] = nil
			if _, err := p.Wait(); err != nil {
				return 0, "", err
			}
		}
		if bufs[k] == nil {
			bufs[k] = make([]byte, db.BlobChunk)
		}
		n, rerr := io.ReadFull(r, bufs[k])
		if n > 0 {
			size += int64(n)
			if size > s.max {
				return 0, "", ErrTooLarge
			}
			if seq == 0 {
				mime = Sniff(bufs[k][:n], declared)
			}
			h.Write(bufs[k][:n])
			data, at := bufs[k][:n], seq
			pending[k] = w.Submit(ctx, func(tx *db.Tx) error { return tx.PutChunk(ctx, upload, at, data) })
		}
		if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
			if size == 0 {
				mime = Sniff(nil, declared)
			}
			return size, mime, nil
		}
		if rerr != nil {
			return 0, "", fmt.Errorf("%w: %v", ErrCut, rerr)
		}
	}
}

// Claim records who as an uploader of a blob the store holds: they
// proved they hold its bytes.
func (s *Store) Claim(ctx context.Context, sum, who string) error {
	_, err := s.db.Writer().Do(ctx, func(tx *db.Tx) error { return tx.AddUploader(ctx, sum, who) })
	return err
}

// Reader reads a blob's bytes from off to end (exclusive), one chunk
// from the store at a time.
type Reader struct {
	ctx      context.Context
	db       *db.DB
	b        db.Blob
	off, end int64
	cur      []byte // the rest of the chunk read last
}

// Open returns a reader of b's bytes in [off, end).
func (s *Store) Open(ctx context.Context, b db.Blob, off, end int64) *Reader {
	return &Reader{ctx: ctx, db: s.db, b: b, off: off, end: min(end, b.Size)}
}

// Seek moves the reader, for http.ServeContent's ranges.
func (r *Reader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.end
	}
	if offset < 0 {
		return 0, errors.New("blobs: seek before the start")
	}
	r.off, r.cur = offset, nil
	return offset, nil
}

func (r *Reader) Read(p []byte) (int, error) {
	if len(r.cur) == 0 {
		if r.off >= r.end {
			return 0, io.EOF
		}
		seq := int(r.off / int64(r.b.Chunk))
		data, err := r.db.BlobChunk(r.ctx, r.b, seq)
		if err != nil {
			return 0, err
		}
		skip := r.off - int64(seq)*int64(r.b.Chunk)
		if skip > int64(len(data)) {
			return 0, fmt.Errorf("blob %s: chunk %d is short", r.b.SHA256, seq)
		}
		data = data[skip:]
		r.cur = data[:min(int64(len(data)), r.end-r.off)]
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	r.off += int64(n)
	return n, nil
}

// ReadAll returns a blob's bytes, for a provider's request: the caller
// bounds what it asks for.
func (s *Store) ReadAll(ctx context.Context, b db.Blob) ([]byte, error) {
	out := bytes.NewBuffer(make([]byte, 0, b.Size))
	if _, err := out.ReadFrom(s.Open(ctx, b, 0, b.Size)); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Sweep removes the blobs no session's log carries, made more than unused
// ago, and the uploads a crash cut short, started more than stale ago;
// at most limit of each.
func (s *Store) Sweep(ctx context.Context, unused, stale time.Duration, limit int) (blobs, uploads int, err error) {
	now := time.Now()
	_, err = s.db.Writer().Do(ctx, func(tx *db.Tx) (err error) {
		blobs, uploads, err = tx.SweepBlobs(ctx, now.Add(-unused), now.Add(-stale), limit)
		return err
	})
	return blobs, uploads, err
}
