package provider

import (
	"encoding/base64"
	"fmt"

	"albedo/wire"
)

// File is a file a message carries, as a provider is sent it: an image's
// bytes (scaled to the provider's bounds), a text file's text, or, for
// anything else or whatever did not fit, only its name, type and size
// (Note).
type File struct {
	SHA256 string
	Name   string
	MIME   string // the blob's type
	Size   int64
	// Image is an image's bytes, of type ImageMIME; nil when it is not
	// sent as an image.
	Image     []byte
	ImageMIME string
	// Text is a text file's text, "" when it is not sent as text; Cut
	// says it is the file's start only.
	Text string
	Cut  bool
	// Why says why a file the provider could take was not sent ("older
	// images are not sent again").
	Why string
}

// Images is implemented by providers whose models take images: the
// daemon sends them images scaled within these bounds.
type Images interface {
	ImageBounds() ImageBounds
}

// ImageBounds are what a provider's API takes of an image.
type ImageBounds struct {
	MaxEdge  int // pixels of the longer side
	MaxBytes int // bytes of one image
}

// Bounds of the files of one request, whatever its provider.
const (
	// MaxImagesPerRequest is how many images one request carries: the
	// newest; older ones are named.
	MaxImagesPerRequest = 8
	// MaxFileText is how much of a text file goes, at most.
	MaxFileText = 64 << 10
	// MaxFilesText is how much text of files one request carries.
	MaxFilesText = 512 << 10
	// ImageTokens is what an image costs in a context window, as the
	// daemon counts it: about what one scaled to 1568 pixels costs.
	ImageTokens = 1600
)

// FileTokens is what the files of a message cost in a context window.
func FileTokens(as []wire.Attachment) int {
	n := 0
	for _, a := range as {
		switch {
		case wire.IsImageType(a.MIME):
			n += ImageTokens
		case wire.IsTextType(a.MIME):
			n += int(min(a.Size, MaxFileText))/4 + MessageOverhead
		default:
			n += MessageOverhead
		}
	}
	return n
}

// Note is the words that stand for f where its bytes do not go: its
// name, type and size, and why; with a text file's text after them.
func (f File) Note() string {
	head := fmt.Sprintf("[file %q, %s, %s", f.Name, f.MIME, sizeWords(f.Size))
	switch {
	case f.Text != "" && f.Cut:
		return head + fmt.Sprintf(", its first %s follow]\n%s", sizeWords(int64(len(f.Text))), f.Text)
	case f.Text != "":
		return head + "]\n" + f.Text
	case f.Why != "":
		return head + ": " + f.Why + "]"
	}
	return head + ": not sent]"
}

// DataURL is an image's bytes as a data: URL, for OpenAI's image_url.
func (f File) DataURL() string {
	return "data:" + f.ImageMIME + ";base64," + base64.StdEncoding.EncodeToString(f.Image)
}

// withNotes is m's text with the notes of its files that go as text.
func withNotes(m Message) string {
	text := m.Text
	for _, f := range m.Files {
		if f.Image != nil {
			continue
		}
		if text != "" {
			text += "\n\n"
		}
		text += f.Note()
	}
	return text
}

func sizeWords(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
