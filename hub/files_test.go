package hub

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/png"
	"strings"
	"testing"

	"albedo/hub/provider"
	"albedo/wire"
)

// imageProvider is a provider that takes images within small bounds.
type imageProvider struct{ provider.Echo }

func (imageProvider) ImageBounds() provider.ImageBounds {
	return provider.ImageBounds{MaxEdge: 32, MaxBytes: 1 << 20}
}

// What of a transcript's files goes to a provider: the newest images,
// scaled; the start of text files, within their bounds; the rest named.
// Files count in a context window's budget.
func TestFilesLoadedForAProvider(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	ctx := context.Background()
	put := func(b []byte) wire.Attachment {
		t.Helper()
		s := sha256.Sum256(b)
		sum := hex.EncodeToString(s[:])
		info, _, err := h.Blobs().Put(ctx, sum, "", bytes.NewReader(b), "test")
		if err != nil {
			t.Fatal(err)
		}
		return wire.Attachment{SHA256: sum, Name: sum[:4], MIME: info.MIME, Size: info.Size}
	}
	var img bytes.Buffer
	png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 64, 16)))
	pic := put(img.Bytes())
	long := put([]byte(strings.Repeat("é", provider.MaxFileText))) // twice MaxFileText bytes
	var msgs []provider.Message
	for range provider.MaxImagesPerRequest + 1 {
		msgs = append(msgs, provider.Message{Role: wire.RoleUser, Files: filesOf([]wire.Attachment{pic})})
	}
	msgs = append(msgs, provider.Message{Role: wire.RoleUser, Files: filesOf([]wire.Attachment{long})})
	h.loadFiles(ctx, imageProvider{}, msgs)
	if f := msgs[0].Files[0]; f.Image != nil || !strings.Contains(f.Note(), "an older image") {
		t.Fatalf("the oldest image of %d: %+v", provider.MaxImagesPerRequest+1, f.Note())
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(msgs[1].Files[0].Image))
	if err != nil || cfg.Width != 32 || cfg.Height != 8 {
		t.Fatalf("a newer image, scaled: %+v %v", cfg, err)
	}
	text := msgs[len(msgs)-1].Files[0]
	if !text.Cut || len(text.Text) != provider.MaxFileText || !strings.HasSuffix(text.Text, "é") {
		t.Fatalf("a long text file: cut %v, %d bytes", text.Cut, len(text.Text))
	}
	// A provider without images is told their names.
	plain := []provider.Message{{Role: wire.RoleUser, Files: filesOf([]wire.Attachment{pic})}}
	h.loadFiles(ctx, provider.Echo{}, plain)
	if plain[0].Files[0].Image != nil || !strings.Contains(plain[0].Files[0].Note(), "not sent") {
		t.Fatalf("an image to a provider without images: %q", plain[0].Files[0].Note())
	}
	ev := wire.Event{Type: wire.EventMessage, Role: wire.RoleUser, Text: "x"}
	with := ev
	with.Attachments = []wire.Attachment{pic}
	if d := eventTokens(with) - eventTokens(ev); d != provider.ImageTokens {
		t.Fatalf("an image costs %d tokens of a window, want %d", d, provider.ImageTokens)
	}
}
