package blobs

import (
	"mime"
	"strings"

	"github.com/gabriel-vasile/mimetype"

	"albedo/wire"
)

// Sniff is the type of a blob whose bytes begin with head, found in the
// bytes by gabriel-vasile/mimetype. The type its sender declared counts
// only where the bytes cannot tell: plain text may be declared a kind of
// text that is no markup (CSV, Markdown, source code, JSON), never one a
// browser would run.
func Sniff(head []byte, declared string) string {
	found := mimetype.Detect(head)
	t := found.String()
	if !found.Is("text/plain") {
		return t
	}
	d, _, err := mime.ParseMediaType(declared)
	if err != nil || !plainKind(d) {
		return t
	}
	return d + "; charset=utf-8"
}

// plainKind says whether a declared type is text a browser shows as text
// and never runs, so that it may name what mimetype finds plain.
func plainKind(t string) bool {
	switch t {
	case "text/csv", "text/markdown", "text/tab-separated-values", "text/x-log",
		"application/json", "application/x-ndjson", "application/yaml", "application/toml",
		"text/yaml", "text/x-diff", "text/x-patch":
		return true
	}
	return strings.HasPrefix(t, "text/x-") && !strings.Contains(t, "script")
}

// Served is how a blob of type t goes to a browser: its Content-Type, and
// whether it may show inline. Anything a browser could run (HTML, SVG,
// XML, scripts, and any type albedo does not list as inert) goes as
// application/octet-stream, to be downloaded.
func Served(t string) (contentType string, inline bool) {
	b := wire.BaseType(t)
	switch {
	case wire.IsImageType(t), b == "image/avif", b == "image/bmp":
		return b, true
	case strings.HasPrefix(b, "audio/"), strings.HasPrefix(b, "video/"):
		return b, true
	case b == "text/plain", plainKind(b):
		return b + "; charset=utf-8", true
	case b == "application/pdf", b == "application/zip", b == "application/gzip",
		b == "application/x-tar", b == "application/x-7z-compressed":
		return b, false
	}
	return "application/octet-stream", false
}

// Extension is a file extension for type t (".png"), "" when none is
// known.
func Extension(t string) string {
	if m := mimetype.Lookup(wire.BaseType(t)); m != nil {
		return m.Extension()
	}
	return ""
}
