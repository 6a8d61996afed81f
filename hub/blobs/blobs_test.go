package blobs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"albedo/wire"
)

func pngOf(w, h int, opaque bool) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			a := uint8(255)
			if !opaque && x == 0 {
				a = 0
			}
			img.Set(x, y, color.NRGBA{R: uint8(x), G: uint8(y), B: 9, A: a})
		}
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	return buf.Bytes()
}

// bombHeader is a PNG's signature and an IHDR that claims w×h pixels,
// with no image data after it: what a decompression bomb shows first.
func bombHeader(w, h uint32) []byte {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6 // 8 bits, RGBA
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	binary.Write(&b, binary.BigEndian, uint32(len(ihdr)))
	chunk := append([]byte("IHDR"), ihdr...)
	b.Write(chunk)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return b.Bytes()
}

func TestFitKeepsScalesAndRefuses(t *testing.T) {
	t.Parallel()
	small := pngOf(30, 20, true)
	if out, typ, err := Fit(small, "image/png", 100, 1<<20); err != nil || !bytes.Equal(out, small) || typ != "image/png" {
		t.Fatalf("an image that fits: %d bytes %s %v", len(out), typ, err)
	}
	check := func(out []byte, typ string, err error, w, h int, format string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		cfg, f, err := image.DecodeConfig(bytes.NewReader(out))
		if err != nil || cfg.Width != w || cfg.Height != h || f != format || typ != "image/"+format {
			t.Fatalf("scaled: %dx%d %s (%s) %v, want %dx%d %s", cfg.Width, cfg.Height, f, typ, err, w, h, format)
		}
	}
	// Too wide: scaled to the edge; opaque goes as JPEG, transparent as PNG.
	out, typ, err := Fit(pngOf(400, 100, true), "image/png", 200, 1<<20)
	check(out, typ, err, 200, 50, "jpeg")
	out, typ, err = Fit(pngOf(400, 100, false), "image/png", 200, 1<<20)
	check(out, typ, err, 200, 50, "png")
	// Small enough in pixels, too many bytes: smaller until it fits.
	big := pngOf(300, 300, false)
	out, typ, err = Fit(big, "image/png", 1000, len(big)/3)
	if err != nil || len(out) > len(big)/3 {
		t.Fatalf("bytes over the bound: %d of %d, %v", len(out), len(big)/3, err)
	}
	// GIF and JPEG decode too.
	var g bytes.Buffer
	gif.Encode(&g, image.NewPaletted(image.Rect(0, 0, 50, 50), color.Palette{color.Black, color.White}), nil)
	out, typ, err = Fit(g.Bytes(), "image/gif", 25, 1<<20)
	check(out, typ, err, 25, 25, "jpeg")
	var j bytes.Buffer
	jpeg.Encode(&j, image.NewRGBA(image.Rect(0, 0, 80, 40)), nil)
	out, typ, err = Fit(j.Bytes(), "image/jpeg", 40, 1<<20)
	check(out, typ, err, 40, 20, "jpeg")

	// A header that claims a bomb's pixels is never decoded.
	if _, _, err := Fit(bombHeader(100_000, 100_000), "image/png", 1568, 1<<20); !errors.Is(err, ErrImage) || !strings.Contains(err.Error(), "100000×100000") {
		t.Fatalf("a bomb's header: %v", err)
	}
	for _, bad := range [][]byte{nil, []byte("not an image"), small[:len(small)/2]} {
		if _, _, err := Fit(bad, "image/png", 10, 1<<20); !errors.Is(err, ErrImage) {
			t.Fatalf("%d bad bytes: %v", len(bad), err)
		}
	}
	if _, _, err := Fit(small, "application/pdf", 10, 1<<20); !errors.Is(err, ErrImage) {
		t.Fatalf("a type that is no image: %v", err)
	}
}

func TestSniffAndServed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		head     []byte
		declared string
		want     string
	}{
		{pngOf(2, 2, true), "text/html", "image/png"},
		{[]byte("<html><body>hi</body></html>"), "text/plain", "text/html"},
		{[]byte("just words\n"), "text/markdown", "text/markdown"},
		{[]byte("just words\n"), "text/html", "text/plain"},
		{[]byte("just words\n"), "application/javascript", "text/plain"},
		{[]byte("package main\n"), "text/x-go", "text/x-go"},
		{[]byte("echo hi\n"), "text/x-shellscript", "text/plain"},
		{[]byte{0, 1, 2, 3, 0xff}, "image/png", "application/octet-stream"},
	} {
		if got := Sniff(tc.head, tc.declared); wire.BaseType(got) != tc.want {
			t.Errorf("Sniff(%q, %q) = %q, want %q", tc.head[:min(len(tc.head), 12)], tc.declared, got, tc.want)
		}
	}
	for typ, want := range map[string]string{
		"image/png": "image/png", "text/plain; charset=utf-8": "text/plain; charset=utf-8", "text/html; charset=utf-8": "application/octet-stream",
		"image/svg+xml": "application/octet-stream", "text/xml": "application/octet-stream", "application/xhtml+xml": "application/octet-stream",
		"text/javascript": "application/octet-stream", "application/x-shockwave-flash": "application/octet-stream", "application/pdf": "application/pdf",
	} {
		if got, _ := Served(typ); got != want {
			t.Errorf("Served(%q) = %q, want %q", typ, got, want)
		}
	}
}

// FuzzFit: whatever bytes an upload holds, scaling them never panics,
// never decodes past MaxPixels, and what it returns fits its bounds.
func FuzzFit(f *testing.F) {
	f.Add(pngOf(3, 3, true), "image/png")
	f.Add(pngOf(40, 10, false), "image/png")
	f.Add(bombHeader(60_000, 60_000), "image/png")
	var g bytes.Buffer
	gif.Encode(&g, image.NewPaletted(image.Rect(0, 0, 20, 20), color.Palette{color.Black, color.White}), nil)
	f.Add(g.Bytes(), "image/gif")
	var j bytes.Buffer
	jpeg.Encode(&j, image.NewRGBA(image.Rect(0, 0, 30, 9)), nil)
	f.Add(j.Bytes(), "image/jpeg")
	f.Add([]byte("RIFF\x00\x00\x00\x00WEBPVP8 "), "image/webp")
	f.Fuzz(func(t *testing.T, data []byte, typ string) {
		out, outType, err := Fit(data, typ, 16, 64<<10)
		if err != nil {
			return
		}
		cfg, _, err := image.DecodeConfig(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("Fit returned bytes that do not decode: %v", err)
		}
		if max(cfg.Width, cfg.Height) > 16 && !bytes.Equal(out, data) {
			t.Fatalf("scaled to %dx%d, past 16", cfg.Width, cfg.Height)
		}
		if len(out) > 64<<10 || outType == "" {
			t.Fatalf("%d bytes of %q", len(out), outType)
		}
	})
}

// FuzzSniff: any bytes and any declared type give a type that Served
// maps, and never one a browser runs inline.
func FuzzSniff(f *testing.F) {
	f.Add([]byte("<svg><script>alert(1)</script></svg>"), "image/svg+xml")
	f.Add([]byte("a,b\n1,2\n"), "text/csv")
	f.Add([]byte("<!doctype html>"), "text/markdown")
	f.Add(pngOf(1, 1, true), "text/x-go")
	f.Fuzz(func(t *testing.T, head []byte, declared string) {
		typ := Sniff(head, declared)
		served, inline := Served(typ)
		b := wire.BaseType(served)
		if inline && (strings.Contains(b, "html") || strings.Contains(b, "xml") || strings.Contains(b, "script") || strings.Contains(b, "svg")) {
			t.Fatalf("%q (declared %q) served inline as %q", typ, declared, served)
		}
	})
}
