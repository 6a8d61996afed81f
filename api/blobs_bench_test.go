package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"albedo/hub"
)

// BenchmarkBlobToViewers serves one 5 MiB image to 100 viewers at once,
// over HTTP on 127.0.0.1, each on its own connection: a round ends with
// the last viewer's last byte (docs/benchmarks.md, "Files").
func BenchmarkBlobToViewers(b *testing.B) {
	h, err := hub.Open(context.Background(), filepath.Join(b.TempDir(), "albedo.db"), hub.Options{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(context.Background())
	srv := New(h, Options{Token: testToken}, nil)
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	img := pngOf(16, 16)
	img = append(img, make([]byte, 5<<20-len(img))...)
	rand.Read(img[len(pngOf(16, 16)):])
	sum := sumOf(img)
	put, _ := http.NewRequest("PUT", hs.URL+"/v1/blobs/"+sum, bytes.NewReader(img))
	put.Header.Set("Authorization", "Bearer "+testToken)
	up := &http.Client{Transport: &http.Transport{}}
	resp, err := up.Do(put)
	if err != nil || resp.StatusCode != http.StatusCreated {
		b.Fatalf("upload: %v %v", resp, err)
	}
	resp.Body.Close()
	up.CloseIdleConnections()
	const viewers = 100
	clients := make([]*http.Client, viewers)
	for i := range clients {
		clients[i] = &http.Client{Transport: &http.Transport{}}
	}
	b.SetBytes(int64(len(img)) * viewers)
	for b.Loop() {
		var wg sync.WaitGroup
		for _, c := range clients {
			wg.Go(func() {
				r, _ := http.NewRequest("GET", hs.URL+"/v1/blobs/"+sum, nil)
				r.Header.Set("Authorization", "Bearer "+testToken)
				resp, err := c.Do(r)
				if err != nil {
					b.Error(err)
					return
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if n != int64(len(img)) {
					b.Errorf("%d bytes", n)
				}
			})
		}
		wg.Wait()
	}
	for _, c := range clients {
		c.CloseIdleConnections()
	}
}
