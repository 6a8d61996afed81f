package api

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"net/http"
	"strings"
	"testing"

	"albedo/hub"
	"albedo/hub/provider"
	"albedo/hub/provider/fakeanthropic"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// filesEnv runs the stack with "gpt" on a fake OpenAI-compatible
// endpoint and "claude" on a fake Anthropic one.
func filesEnv(t *testing.T) (*env, *fakeopenai.Server, *fakeanthropic.Server) {
	t.Helper()
	fo, err := fakeopenai.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fo.Close() })
	fa, err := fakeanthropic.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fa.Close() })
	reg, err := provider.NewRegistry(provider.Config{DefaultProvider: "gpt", Providers: map[string]provider.Profile{
		"gpt":    {Kind: "openai", BaseURL: fo.URL, DefaultModel: "gpt-4o"},
		"claude": {Kind: "anthropic", BaseURL: fa.URL, DefaultModel: "claude-test", APIKeyEnv: "KEY"},
	}}, func(string) string { return "k" })
	if err != nil {
		t.Fatal(err)
	}
	return newEnvWith(t, Options{}, hub.Options{Providers: reg}), fo, fa
}

// sendFiles sends text with the blobs of sums as input n of session, and
// waits for its turn to end.
func (e *env) sendFiles(s wire.Session, n int, text string, names map[string]string) {
	e.t.Helper()
	w := e.dial(true).HelloFromStart(s)
	session := s.ID
	var atts []string
	for sum, name := range names {
		atts = append(atts, fmt.Sprintf(`{"sha256":%q,"name":%q}`, sum, name))
	}
	var r wire.Receipt
	if code, _ := e.do("PUT", inputPath(session, n), nil, fmt.Sprintf(`{"text":%q,"attachments":[%s]}`, text, strings.Join(atts, ",")), &r); code != http.StatusAccepted {
		e.t.Fatalf("input %d: %d", n, code)
	}
	w.Next(func(f wire.Frame) bool {
		return f.Op == wire.PushEvent && f.Event.Type == wire.EventTurn && f.Event.TurnID == r.TurnID && f.Event.State != wire.TurnStarted
	})
}

// Images go to OpenAI as image_url parts with a data: URL and to
// Anthropic as image blocks, scaled to each one's bounds; a text file
// goes as text with its name; anything else is named, not sent.
func TestFilesReachTheProviders(t *testing.T) {
	t.Parallel()
	e, fo, fa := filesEnv(t)
	small, huge := pngOf(40, 30), pngOf(1800, 600) // huge: past Anthropic's 1568, small enough to scale quickly under -race
	notes := []byte("line one\nline two\n")
	blob := append([]byte{0x50, 0x4b, 0x03, 0x04}, bytes.Repeat([]byte{1}, 100)...) // a zip's start
	for _, b := range [][]byte{small, huge, notes, blob} {
		e.upload(b, "application/octet-stream", nil, http.StatusCreated)
	}
	e.sendFiles(e.createWith("g", `{"provider":"gpt"}`), 1, "what is this?", map[string]string{sumOf(small): "shot.png", sumOf(notes): "notes.txt", sumOf(blob): "data.zip"})
	req := fo.Requests()[0]
	m, ok := req.UserMessage(len(req.Messages) - 1)
	if !ok || len(m.Images) != 1 || m.Images[0] != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(small) {
		t.Fatalf("OpenAI's user message: %+v", m)
	}
	for _, want := range []string{"what is this?", `[file "notes.txt", text/plain`, "line one\nline two", `[file "data.zip", application/zip, 104 bytes: not sent]`} {
		if !strings.Contains(m.Text, want) {
			t.Fatalf("OpenAI's text %q lacks %q", m.Text, want)
		}
	}
	// Too large for Anthropic: scaled to 1568 pixels on its long side.
	e.sendFiles(e.createWith("c", `{"provider":"claude"}`), 1, "", map[string]string{sumOf(huge): "wide.png"})
	areq := fa.Requests()[0]
	last := areq.Messages[len(areq.Messages)-1]
	var img *struct{ Type, MediaType, Data string }
	for _, c := range last.Content {
		if c.Type == "image" && c.Source != nil {
			img = &struct{ Type, MediaType, Data string }{c.Source.Type, c.Source.MediaType, c.Source.Data}
		}
	}
	if img == nil || img.Type != "base64" {
		t.Fatalf("Anthropic's user message: %+v", last)
	}
	raw, err := base64.StdEncoding.DecodeString(img.Data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil || cfg.Width != 1568 || cfg.Height != 523 || "image/"+format != img.MediaType {
		t.Fatalf("the scaled image: %+v %s %v (media type %s)", cfg, format, err, img.MediaType)
	}
}
