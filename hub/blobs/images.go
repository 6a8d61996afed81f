package blobs

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/draw"
	_ "image/gif" // decoders: the images every provider takes
	"image/jpeg"
	"image/png"
	"math"

	xdraw "golang.org/x/image/draw"
	_ "golang.org/x/image/webp"

	"albedo/wire"
)

// MaxPixels bounds the images the daemon decodes to scale: one whose
// header claims more (a decompression bomb's) is not decoded at all.
const MaxPixels = 50_000_000

// ErrImage: bytes that do not decode as the image their type says, or
// that claim more than MaxPixels.
var ErrImage = errors.New("not an image the daemon can scale")

// Fit returns an image's bytes within maxEdge pixels on its longer side
// and maxBytes in all: as they are when they fit, else decoded, scaled
// down (golang.org/x/image/draw's Catmull-Rom) and encoded again, as
// PNG when the image has transparency, else as JPEG. Its header is read
// first, so that no bomb is decoded.
func Fit(data []byte, mimeType string, maxEdge, maxBytes int) (out []byte, outType string, err error) {
	if !wire.IsImageType(mimeType) {
		return nil, "", fmt.Errorf("%w: %s", ErrImage, mimeType)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrImage, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return nil, "", fmt.Errorf("%w: %d×%d pixels", ErrImage, cfg.Width, cfg.Height)
	}
	edge := max(cfg.Width, cfg.Height)
	if edge <= maxEdge && len(data) <= maxBytes {
		return data, wire.BaseType(mimeType), nil
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrImage, err)
	}
	for scale := 1.0; ; scale *= 0.75 {
		w, h := cfg.Width, cfg.Height
		if edge > maxEdge || scale < 1 {
			f := scale * float64(min(maxEdge, edge)) / float64(edge)
			w, h = max(1, int(math.Round(float64(w)*f))), max(1, int(math.Round(float64(h)*f)))
		}
		out, outType, err = encode(scaled(src, w, h))
		if err != nil || len(out) <= maxBytes {
			return out, outType, err
		}
		if w <= 16 && h <= 16 {
			return nil, "", fmt.Errorf("%w: no size of it fits %d bytes", ErrImage, maxBytes)
		}
	}
}

// scaled is src drawn at w×h.
func scaled(src image.Image, w, h int) image.Image {
	b := src.Bounds()
	if b.Dx() == w && b.Dy() == h {
		return src
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.CatmullRom.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
	return dst
}

// encode writes img as PNG if it has any transparency, else as JPEG.
func encode(img image.Image) ([]byte, string, error) {
	var buf bytes.Buffer
	if o, ok := img.(interface{ Opaque() bool }); ok && !o.Opaque() {
		if err := png.Encode(&buf, img); err != nil {
			return nil, "", err
		}
		return buf.Bytes(), "image/png", nil
	}
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), "image/jpeg", nil
}
