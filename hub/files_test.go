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

	"albedo/hub/mcphost"
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

// The files of an MCP tool's result are kept as blobs the result carries:
// named by their resource's URI, or by their kind and place; the same
// bytes once; past the store's limit or wire.MaxAttachments, a note in
// the output that says what was left out and why.
func TestAToolsFilesAreKept(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{MaxAttachmentBytes: 1 << 10})
	ctx := context.Background()
	var img bytes.Buffer
	png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 4, 4)))
	files := []mcphost.File{
		{What: "an image", MIME: "image/png", Data: img.Bytes()},
		{What: "the resource <file:///logs/build.log>", Name: "build.log", MIME: "text/plain", Data: []byte("ok\n")},
		{What: "an image", MIME: "image/png", Data: img.Bytes()},
		{What: "audio", MIME: "audio/wav", Data: bytes.Repeat([]byte{1}, 2<<10)},
		{What: "the resource <x:/..>", Name: "..", MIME: "application/octet-stream", Data: []byte{0, 1, 2}},
	}
	for i := range wire.MaxAttachments {
		files = append(files, mcphost.File{What: "an image", MIME: "text/plain", Data: []byte{'a' + byte(i)}})
	}
	atts, notes := h.keepFiles(ctx, "mcp:srv", files)
	if len(atts) != wire.MaxAttachments {
		t.Fatalf("%d files kept: %+v", len(atts), atts)
	}
	if a := atts[0]; a.Name != "image-1.png" || a.MIME != "image/png" || a.Size != int64(img.Len()) {
		t.Fatalf("the image: %+v", a)
	}
	if a := atts[1]; a.Name != "build.log" || !strings.HasPrefix(a.MIME, "text/plain") {
		t.Fatalf("the resource: %+v", a)
	}
	if a := atts[2]; a.Name != "file-5" || a.Size != 3 {
		t.Fatalf("a resource with no name of its own: %+v", a)
	}
	if !strings.Contains(notes, "[audio (audio/wav, 2048 bytes) was left out: it passes max_attachment_bytes (1024)]") ||
		strings.Count(notes, "a result carries at most 16 files") != 3 {
		t.Fatalf("notes:%s", notes)
	}
	if _, err := h.Blobs().Get(ctx, atts[0].SHA256); err != nil {
		t.Fatalf("the image's blob: %v", err)
	}
}
