//go:build !e2e_only || e2e_term

package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"albedo/wire"
)

// termPNG is a small PNG, under a KiB, so that its size shows in bytes.
func termPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 16, 12))
	for x := range 16 {
		img.Set(x, x%12, color.RGBA{R: 200, G: uint8(x * 16), B: 10, A: 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if b.Len() >= 1024 {
		t.Fatalf("the picture is %d bytes: more than its size in bytes shows", b.Len())
	}
	return b.Bytes()
}

// Files in the terminal, in a real terminal: /attach uploads a PNG (its
// path quoted: it holds a space) and its chip shows above the composer;
// the message sent with it brings the model the picture as an image part,
// and the transcript shows the file's line under the text. Ctrl-O lists
// the file, and Enter hands it, downloaded into albedo's directory of the
// system's temporary one, to the system's opener: here a fake xdg-open,
// first on PATH, that writes down what it was given.
func TestTermFilesAttachSendAndOpen(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "k", create: wire.SessionCreate{Provider: "fake"}})
	dir, bin, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	pic := termPNG(t)
	picPath := filepath.Join(dir, "bug shot.png")
	if err := os.WriteFile(picPath, pic, 0o600); err != nil {
		t.Fatal(err)
	}
	opened := filepath.Join(dir, "opened")
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s' \"$1\" > '%s.part' && mv '%s.part' '%s'\n", opened, opened, opened)
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}

	x := startTmuxEnv(t, fmt.Sprintf("ALBEDO_HOME=%s TMPDIR=%s PATH=%s:$PATH", fx.home, tmp, bin), 100, 30)
	x.waitPane("the session, connected", func(s string) bool {
		return strings.Contains(s, " connected") && strings.Contains(s, "message · /help")
	})
	x.keys("-l", `/attach "`+picPath+`"`)
	x.keys("Enter")
	size := fmt.Sprintf("%d B", len(pic))
	x.waitPane("the file's chip above the composer", has("[bug shot.png · "+size+"]"))
	x.keys("-l", "what is in this picture?")
	x.keys("Enter")
	pane := x.waitPane("the message with its file, and the reply", func(s string) bool {
		return strings.Contains(s, "what is in this picture?") && strings.Contains(s, "📎 bug shot.png · image/png · "+size) &&
			strings.Contains(s, "fake:") && !strings.Contains(s, "[bug shot.png")
	})

	want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pic)
	got := false
	for _, req := range fx.fake.Requests() {
		if m, ok := req.UserMessage(len(req.Messages) - 1); ok && slices.Equal(m.Images, []string{want}) && strings.Contains(m.Text, "what is in this picture?") {
			got = true
		}
	}
	if !got {
		t.Fatalf("no request to the model carried the picture as an image part: %+v\n%s", fx.fake.Requests(), pane)
	}

	x.keys("C-o")
	x.waitPane("the list of the session's files", func(s string) bool {
		return strings.Contains(s, "files · 1 · ↑↓ Enter opens · s saves · Esc") && strings.Contains(s, "📎 bug shot.png · image/png · "+size+"  ")
	})
	x.keys("Enter")
	x.waitPane("the notice that the opener opened it", has("opened bug shot.png (xdg-open)"))
	// The opener has exited (the terminal waits for that), its file written.
	named, err := os.ReadFile(opened)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(pic)
	if path := filepath.Join(tmp, "albedo-files", hex.EncodeToString(sum[:])[:12]+"-bug shot.png"); string(named) != path {
		t.Fatalf("the opener was given %q, want %q", named, path)
	}
	if b, err := os.ReadFile(string(named)); err != nil || !bytes.Equal(b, pic) {
		t.Fatalf("the file opened holds %d bytes (%v), not the picture", len(b), err)
	}
	x.keys("C-q")
}
