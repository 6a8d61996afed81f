package wire

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Files in sessions (docs/protocol.md, "Files"): blobs stored by their
// sha256, which messages carry as attachments.

// Attachment is a file a message carries: a blob of the store, with the
// name it was given and the type and size the store found. An input
// names only SHA256 (and Name); the daemon fills in the rest.
type Attachment struct {
	SHA256 string `json:"sha256"`
	Name   string `json:"name,omitempty"`
	MIME   string `json:"mime,omitempty"`
	Size   int64  `json:"size,omitempty"`
}

// BlobInfo is the answer to PUT /v1/blobs/{sha256}: the blob as stored.
type BlobInfo struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	MIME   string `json:"mime"`
}

// Bounds of attachments.
const (
	// MaxAttachments is how many files one message may carry.
	MaxAttachments = 16
	// MaxAttachmentName is the byte length of an attachment's name.
	MaxAttachmentName = 255
	// DefaultMaxAttachmentBytes is the default of the setting
	// max_attachment_bytes: the largest blob the store takes.
	DefaultMaxAttachmentBytes = 20 << 20
)

// ValidSHA256 says whether s is a sha256 as the blobs' routes name it:
// 64 lower-case hex digits.
func ValidSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// CheckAttachments checks the attachments an input names: at most
// MaxAttachments, each a valid sha256 named once, its name bounded,
// printable and without a path. The type and size are the daemon's to
// fill in.
func CheckAttachments(as []Attachment) *Error {
	if len(as) > MaxAttachments {
		return Errorf(CodeBadRequest, "attachments: %d; a message carries at most %d", len(as), MaxAttachments)
	}
	seen := make(map[string]bool, len(as))
	for i, a := range as {
		if !ValidSHA256(a.SHA256) {
			return Errorf(CodeBadRequest, "attachments[%d].sha256 is not 64 lower-case hex digits", i)
		}
		if seen[a.SHA256] {
			return Errorf(CodeBadRequest, "attachments[%d]: %s is attached twice", i, a.SHA256)
		}
		seen[a.SHA256] = true
		if err := checkAttachmentName(a.Name); err != nil {
			return Errorf(CodeBadRequest, "attachments[%d].name: %v", i, err)
		}
	}
	return nil
}

func checkAttachmentName(n string) error {
	switch {
	case len(n) > MaxAttachmentName:
		return fmt.Errorf("%d bytes; the limit is %d", len(n), MaxAttachmentName)
	case !utf8.ValidString(n):
		return fmt.Errorf("not UTF-8")
	case strings.ContainsAny(n, "/\\"):
		return fmt.Errorf("a name, not a path")
	case n == "." || n == "..":
		return fmt.Errorf("%q is not a file's name", n)
	}
	for _, r := range n {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("a control character")
		}
	}
	return nil
}

// BaseType is a MIME type without its parameters, lower-case:
// "text/plain" for "text/plain; charset=utf-8".
func BaseType(t string) string {
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = t[:i]
	}
	return strings.TrimSpace(strings.ToLower(t))
}

// IsImageType says whether a type is an image every provider takes:
// PNG, JPEG, GIF or WebP.
func IsImageType(t string) bool {
	switch BaseType(t) {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// IsTextType says whether a type is text a model reads as text: text/*
// (markup too: only a browser must not run it), JSON, XML, YAML, TOML.
func IsTextType(t string) bool {
	b := BaseType(t)
	switch b {
	case "application/json", "application/xml", "application/x-ndjson", "application/yaml", "application/toml", "image/svg+xml":
		return true
	}
	return strings.HasPrefix(b, "text/")
}
