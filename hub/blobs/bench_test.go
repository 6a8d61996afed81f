package blobs

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"albedo/db"
	"albedo/db/pgtest"
)

// farFuture sweeps every blob no session carries, however new.
var farFuture = time.Now().Add(1000 * time.Hour)

// TestMain stops the package's PostgreSQL, if a benchmark started one.
func TestMain(m *testing.M) { os.Exit(pgtest.ThenStop(m).Run()) }

// BenchmarkBlobs moves a 20 MiB file through the store, a chunk at a
// time, on SQLite and on PostgreSQL, beside a plain copy of it to a file
// on the same disk (written and synced) and a read of it back: MB/s is
// the figure (docs/benchmarks.md, "Files").
func BenchmarkBlobs(b *testing.B) {
	data := make([]byte, 20<<20)
	rand.Read(data)
	s := sha256.Sum256(data)
	sum := hex.EncodeToString(s[:])
	b.Run("file/copy", func(b *testing.B) {
		dir := b.TempDir()
		b.SetBytes(int64(len(data)))
		for i := 0; b.Loop(); i++ {
			f, err := os.Create(filepath.Join(dir, "copy"))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(f, bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
	b.Run("file/read", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "f")
		os.WriteFile(path, data, 0o600)
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			f, _ := os.Open(path)
			io.Copy(io.Discard, f)
			f.Close()
		}
	})
	for _, store := range []string{"sqlite", "postgres"} {
		target := func(b *testing.B) string {
			if store == "postgres" {
				return pgtest.Shared(b).Database(b)
			}
			return filepath.Join(b.TempDir(), "albedo.db")
		}
		b.Run(store+"/put", func(b *testing.B) {
			d, err := db.Open(context.Background(), target(b), db.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close(context.Background())
			st := New(d, 0)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				b.StopTimer()
				// Each round stores it anew: the last one's blob goes.
				d.Writer().Do(context.Background(), func(tx *db.Tx) error {
					_, _, err := tx.SweepBlobs(context.Background(), farFuture, farFuture, 10)
					return err
				})
				b.StartTimer()
				if _, created, err := st.Put(context.Background(), sum, "", bytes.NewReader(data), "bench"); err != nil || !created {
					b.Fatalf("put: %v, created %v", err, created)
				}
			}
		})
		b.Run(store+"/get", func(b *testing.B) {
			d, err := db.Open(context.Background(), target(b), db.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close(context.Background())
			st := New(d, 0)
			if _, _, err := st.Put(context.Background(), sum, "", bytes.NewReader(data), "bench"); err != nil {
				b.Fatal(err)
			}
			blob, err := st.Get(context.Background(), sum)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if n, err := io.Copy(io.Discard, st.Open(context.Background(), blob, 0, blob.Size)); err != nil || n != int64(len(data)) {
					b.Fatalf("get: %d, %v", n, err)
				}
			}
		})
	}
}
