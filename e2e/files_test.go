//go:build !e2e_only || e2e_core

package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"albedo/client"
	"albedo/hub/provider/fakeanthropic"
	"albedo/wire"
)

// sha is the sha256 of b as the blobs' routes name it.
func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// getBlob GETs a blob with token, and returns the status and bytes.
func getBlob(t *testing.T, home, token, sum string) (int, []byte) {
	t.Helper()
	info, err := client.ReadDaemonFile(home)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/v1/blobs/%s", info.Port, sum), nil)
	if token == "" {
		token = info.Token
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// albedo send --file: the files go up once, the message carries them,
// the model gets the image as an image part and the text file as text;
// a link to the session reads them, a link to another does not; an
// export with --blobs and an import into another home bring the bytes
// along.
func TestFilesFromTheCLIReachTheModelAndTravelWithExports(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "k", create: wire.SessionCreate{Provider: "fake"}})
	dir := t.TempDir()
	pic, notes := screenshot(64, 48), []byte("the build fails on line 3\n")
	picPath, notesPath := filepath.Join(dir, "bug.png"), filepath.Join(dir, "log.txt")
	os.WriteFile(picPath, pic, 0o600)
	os.WriteFile(notesPath, notes, 0o600)
	cli(t, fx.home, "send", "k", "why?", "--file", picPath, "--file", notesPath)

	req := fx.fake.Requests()[0]
	m, ok := req.UserMessage(len(req.Messages) - 1)
	if !ok || len(m.Images) != 1 || m.Images[0] != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(pic) ||
		!strings.Contains(m.Text, "why?") || !strings.Contains(m.Text, `[file "log.txt", text/plain`) || !strings.Contains(m.Text, "the build fails") {
		t.Fatalf("the model got %+v", m)
	}
	page, err := fx.c.History(fx.ctx, "k", 0, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if a := page.Events[0].Attachments; len(a) != 2 || a[0].Name != "bug.png" || a[0].MIME != "image/png" || a[1].Name != "log.txt" {
		t.Fatalf("the message carries %+v", a)
	}

	here := strings.TrimSpace(lastLine(cli(t, fx.home, "share", "k", "--token")))
	if _, err := fx.c.CreateSession(fx.ctx, "other", wire.SessionCreate{Title: "other"}); err != nil {
		t.Fatal(err)
	}
	there := strings.TrimSpace(lastLine(cli(t, fx.home, "share", "other", "--token")))
	if code, b := getBlob(t, fx.home, here, sha(pic)); code != 200 || !bytes.Equal(b, pic) {
		t.Fatalf("a link to the session: %d, %d bytes", code, len(b))
	}
	if code, _ := getBlob(t, fx.home, there, sha(pic)); code != 404 {
		t.Fatalf("a link to another session: %d", code)
	}

	export := filepath.Join(dir, "k.json")
	out := cli(t, fx.home, "export", "k", "--format", "json", "--blobs", filepath.Join(dir, "k.blobs"))
	os.WriteFile(export, []byte(out), 0o600)
	if b, err := os.ReadFile(filepath.Join(dir, "k.blobs", sha(pic))); err != nil || !bytes.Equal(b, pic) {
		t.Fatalf("the export's blob: %v", err)
	}
	other := newFixture(t, fixtureOpts{})
	id := strings.TrimSpace(lastLine(cli(t, other.home, "import", export)))
	if code, b := getBlob(t, other.home, "", sha(notes)); code != 200 || !bytes.Equal(b, notes) {
		t.Fatalf("the imported session's file: %d %q", code, b)
	}
	page, err = other.c.History(other.ctx, id, 0, 0, 10)
	if err != nil || len(page.Events) == 0 || len(page.Events[0].Attachments) != 2 {
		t.Fatalf("the imported message: %+v %v", page, err)
	}
}

// An upload cut by SIGKILL leaves no blob, and one finished before it
// stays whole. Memory: a 96 MiB upload and download (the limit raised
// for it) grow the daemon's peak RSS by its store's page caches (16 MiB
// for the writer, 2 MiB for each reader) and a few chunks, as much as a
// 16 MiB one does, not by the file; the collector's floor, heap the daemon
// fills whatever it is sent, is off.
func TestFilesSurviveAKillWholeOrNotAtAll(t *testing.T) {
	parallelHeavy(t)
	home := t.TempDir()
	d := startDaemon(t, home, "--max-attachment-bytes", fmt.Sprint(96<<20), "--gc-floor-bytes", "0")
	c := newClient(t, home)
	info, err := client.ReadDaemonFile(home)
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 96<<20)
	rand.Read(big)
	f := filepath.Join(t.TempDir(), "big.bin")
	os.WriteFile(f, big, 0o600)
	before := peakMiB(t, d.cmd.Process.Pid)
	// Each step has a deadline of its own (ctxT): under -race on a busy
	// machine the upload, its download, the kill and the second download
	// together can outlast one.
	if _, err := c.PutFile(ctxT(t), f); err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := c.GetBlob(ctxT(t), sha(big), h); err != nil || hex.EncodeToString(h.Sum(nil)) != sha(big) {
		t.Fatalf("download: %v", err)
	}
	grew := peakMiB(t, d.cmd.Process.Pid) - before
	t.Logf("peak RSS grew %.1f MiB over a 96 MiB upload and download", grew)
	if grew > 64 {
		t.Fatalf("peak RSS grew %.1f MiB: the file was held whole", grew)
	}

	// Half of another upload, then SIGKILL.
	cut := make([]byte, 8<<20)
	rand.Read(cut)
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", info.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PUT /v1/blobs/%s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", sha(cut), info.Token, len(cut))
	if _, err := conn.Write(cut[:len(cut)/2]); err != nil {
		t.Fatal(err)
	}
	d.kill()
	startDaemon(t, home, "--max-attachment-bytes", fmt.Sprint(96<<20))
	c = newClient(t, home)
	if _, err := c.HeadBlob(ctxT(t), sha(cut)); client.Code(err) != wire.CodeNotFound {
		t.Fatalf("the cut upload after a restart: %v", err)
	}
	h.Reset()
	if _, err := c.GetBlob(ctxT(t), sha(big), h); err != nil || hex.EncodeToString(h.Sum(nil)) != sha(big) {
		t.Fatalf("the whole upload after a kill: %v", err)
	}
}

// peakMiB is a process's peak resident set (VmHWM), from /proc.
func peakMiB(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			var kb float64
			fmt.Sscan(f[1], &kb)
			return kb / 1024
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// The same screenshot, sent to an Anthropic profile, goes as an image
// block with its media type.
func TestFilesReachAnthropicAsImageBlocks(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	ant, err := fakeanthropic.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ant.Close() })
	withFakeAnd(t, home, fmt.Sprintf("[providers.claude]\nkind = \"anthropic\"\nbase_url = %q\ndefault_model = \"claude-test\"\n", ant.URL))
	startDaemon(t, home)
	c := newClient(t, home)
	if _, err := c.CreateSession(ctxT(t), "a", wire.SessionCreate{Title: "a", Provider: "claude"}); err != nil {
		t.Fatal(err)
	}
	pic := screenshot(40, 30)
	path := filepath.Join(t.TempDir(), "bug.png")
	os.WriteFile(path, pic, 0o600)
	cli(t, home, "send", "a", "what is this?", "--file", path)
	req := ant.Requests()[0]
	last := req.Messages[len(req.Messages)-1]
	var found bool
	for _, b := range last.Content {
		if b.Type == "image" && b.Source != nil && b.Source.Type == "base64" && b.Source.MediaType == "image/png" && b.Source.Data == base64.StdEncoding.EncodeToString(pic) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no image block of the screenshot in %+v", last)
	}
}
