package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"testing"

	"albedo/hub"
	"albedo/hub/provider"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// sumOf is the sha256 of b as the blobs' routes name it.
func sumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// pngOf is a w×h PNG.
func pngOf(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, x%h, color.RGBA{R: uint8(x), G: 100, B: 200, A: 255})
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	return buf.Bytes()
}

// blobReq sends a blob request with raw bytes and returns its status,
// headers and body.
func (e *env) blobReq(method, sum string, hdr map[string]string, body []byte) (int, http.Header, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, _ := http.NewRequest(method, e.url+"/v1/blobs/"+sum, rd)
	req.Header.Set("Authorization", "Bearer "+testToken)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// upload PUTs body as the bearer of hdr, wanting code.
func (e *env) upload(body []byte, ctype string, hdr map[string]string, code int) wire.BlobInfo {
	e.t.Helper()
	h := map[string]string{"Content-Type": ctype}
	for k, v := range hdr {
		h[k] = v
	}
	got, _, b := e.blobReq("PUT", sumOf(body), h, body)
	if got != code {
		e.t.Fatalf("PUT a blob of %d bytes: %d %s, want %d", len(body), got, b, code)
	}
	var info wire.BlobInfo
	json.Unmarshal(b, &info)
	return info
}

func TestBlobsStoredServedAndRanged(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	pic := pngOf(64, 32)
	// Its sender says HTML: the bytes say PNG, and they decide.
	info := e.upload(pic, "text/html", nil, http.StatusCreated)
	if info.SHA256 != sumOf(pic) || info.Size != int64(len(pic)) || info.MIME != "image/png" {
		t.Fatalf("the blob stored: %+v", info)
	}
	e.upload(pic, "image/png", nil, http.StatusOK) // held already

	code, h, body := e.blobReq("GET", sumOf(pic), nil, nil)
	if code != 200 || !bytes.Equal(body, pic) || h.Get("Content-Type") != "image/png" || h.Get("ETag") != `"`+sumOf(pic)+`"` ||
		h.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(h.Get("Content-Disposition"), "inline") {
		t.Fatalf("GET: %d %d bytes %v", code, len(body), h)
	}
	if code, h, body := e.blobReq("HEAD", sumOf(pic), nil, nil); code != 200 || len(body) != 0 || h.Get("Content-Length") != fmt.Sprint(len(pic)) {
		t.Fatalf("HEAD: %d %v", code, h)
	}
	if code, _, _ := e.blobReq("GET", sumOf(pic), map[string]string{"If-None-Match": `"` + sumOf(pic) + `"`}, nil); code != http.StatusNotModified {
		t.Fatalf("If-None-Match: %d", code)
	}

	// A blob of several chunks, read across a chunk's end.
	big := make([]byte, 600<<10)
	for i := range big {
		big[i] = byte(rand.IntN(256))
	}
	e.upload(big, "application/octet-stream", nil, http.StatusCreated)
	from, to := 256<<10-10, 256<<10+9
	code, h, body = e.blobReq("GET", sumOf(big), map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", from, to)}, nil)
	if code != http.StatusPartialContent || !bytes.Equal(body, big[from:to+1]) || h.Get("Content-Range") != fmt.Sprintf("bytes %d-%d/%d", from, to, len(big)) {
		t.Fatalf("a range across chunks: %d %d bytes %v", code, len(body), h)
	}
	if code, _, body := e.blobReq("GET", sumOf(big), nil, nil); code != 200 || !bytes.Equal(body, big) {
		t.Fatalf("the whole of a blob of chunks: %d, %d bytes", code, len(body))
	}
	if code, _, _ := e.blobReq("GET", sumOf(big), map[string]string{"Range": fmt.Sprintf("bytes=%d-", len(big)+5)}, nil); code != http.StatusRequestedRangeNotSatisfiable {
		t.Fatalf("a range past the end: %d", code)
	}
	// Nothing at all is a blob too.
	e.upload([]byte{}, "text/plain", nil, http.StatusCreated)
	if code, _, body := e.blobReq("GET", sumOf(nil), nil, nil); code != 200 || len(body) != 0 {
		t.Fatalf("the empty blob: %d %q", code, body)
	}
}

// What a browser could run is served to be downloaded, never shown.
func TestBlobsThatABrowserWouldRunAreDownloads(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	for _, tc := range []struct {
		name, declared string
		body           []byte
		mime           string
	}{
		{"html", "image/png", []byte("<!DOCTYPE html><html><body><script>alert(1)</script></body></html>"), "text/html"},
		{"svg with a script", "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), "image/svg+xml"},
		{"javascript declared as text", "text/plain", []byte("#!/usr/bin/env node\nconsole.log(1)\n"), "text/javascript"},
		{"html declared as markdown", "text/markdown", []byte("<html><script>alert(1)</script></html>"), "text/html"},
	} {
		info := e.upload(tc.body, tc.declared, nil, http.StatusCreated)
		if !strings.HasPrefix(info.MIME, tc.mime) {
			t.Errorf("%s: stored as %q, want %q", tc.name, info.MIME, tc.mime)
		}
		code, h, _ := e.blobReq("GET", info.SHA256, nil, nil)
		if code != 200 || h.Get("Content-Type") != "application/octet-stream" || !strings.HasPrefix(h.Get("Content-Disposition"), "attachment") ||
			!strings.Contains(h.Get("Content-Security-Policy"), "sandbox") {
			t.Errorf("%s: served %d as %q, %q, CSP %q", tc.name, code, h.Get("Content-Type"), h.Get("Content-Disposition"), h.Get("Content-Security-Policy"))
		}
	}
	// Text its sender calls CSV is CSV: the bytes cannot tell, and CSV
	// runs nowhere.
	info := e.upload([]byte("a,b\n1,2\n"), "text/csv", nil, http.StatusCreated)
	if !strings.HasPrefix(info.MIME, "text/csv") {
		t.Fatalf("csv stored as %q", info.MIME)
	}
}

func TestBlobsRefuseBadUploadsAndKeepNothing(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, Options{}, hub.Options{MaxAttachmentBytes: 300 << 10})
	body := bytes.Repeat([]byte("x"), 1000)
	er := func(code int, b []byte, want int, wantCode wire.Code, what string) {
		t.Helper()
		var eb wire.ErrorBody
		json.Unmarshal(b, &eb)
		if code != want || eb.Error == nil || eb.Error.Code != wantCode {
			t.Fatalf("%s: %d %s, want %d %s", what, code, b, want, wantCode)
		}
	}
	code, _, b := e.blobReq("PUT", "ABC", nil, body)
	er(code, b, 400, wire.CodeBadRequest, "a name that is no sha256")
	code, _, b = e.blobReq("PUT", strings.Repeat("A", 64), nil, body)
	er(code, b, 400, wire.CodeBadRequest, "upper-case hex")

	other := sumOf([]byte("something else"))
	code, _, b = e.blobReq("PUT", other, nil, body)
	er(code, b, 400, wire.CodeBadRequest, "a body that hashes otherwise")
	if code, _, _ := e.blobReq("GET", other, nil, nil); code != 404 {
		t.Fatalf("after a mismatch the blob is there: %d", code)
	}

	large := bytes.Repeat([]byte("y"), 300<<10+1)
	code, _, b = e.blobReq("PUT", sumOf(large), nil, large)
	er(code, b, 413, wire.CodeTooLarge, "over the limit, said by Content-Length")
	// The same without a length: it is found out a chunk at a time.
	req, _ := http.NewRequest("PUT", e.url+"/v1/blobs/"+sumOf(large), io.MultiReader(bytes.NewReader(large)))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	er(resp.StatusCode, b, 413, wire.CodeTooLarge, "over the limit, chunked")

	// A body cut short: the connection ends before Content-Length.
	full := bytes.Repeat([]byte("z"), 200<<10)
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "PUT /v1/blobs/%s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", sumOf(full), testToken, len(full))
	conn.Write(full[:len(full)/2])
	conn.(*net.TCPConn).CloseWrite()
	io.Copy(io.Discard, conn)
	conn.Close()
	for _, sum := range []string{sumOf(full), sumOf(large)} {
		if code, _, _ := e.blobReq("HEAD", sum, nil, nil); code != 404 {
			t.Fatalf("a refused upload left its blob: %d", code)
		}
	}
	// And not a chunk of them is left in the store.
	var chunks, uploads int
	ro, err := sql.Open("sqlite3", "file:"+e.path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := ro.QueryRow(`SELECT (SELECT COUNT(*) FROM blob_chunks), (SELECT COUNT(*) FROM blob_uploads)`).Scan(&chunks, &uploads); err != nil {
		t.Fatal(err)
	}
	if chunks != 0 || uploads != 0 {
		t.Fatalf("refused uploads left %d chunks and %d uploads", chunks, uploads)
	}
}

// A blob is read by who uploaded it and by whoever may read a session
// that carries it; anyone else gets 404, as for no blob at all.
func TestBlobsAreReadByThoseWhoMayReadTheirSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s1")
	e.create("s2")
	ann, bob := e.member("ann", false), e.member("bob", false)
	e.grant("s1", "ann", wire.AccessWrite)
	pic := pngOf(20, 20)
	sum := sumOf(pic)
	e.upload(pic, "image/png", e.as(ann.Token), http.StatusCreated)
	get := func(who map[string]string) int {
		t.Helper()
		code, _, _ := e.blobReq("GET", sum, who, nil)
		return code
	}
	if get(e.as(ann.Token)) != 200 || get(e.as(bob.Token)) != 404 || get(nil) != 404 {
		t.Fatalf("before any message: ann %d, bob %d, the owner %d", get(e.as(ann.Token)), get(e.as(bob.Token)), get(nil))
	}
	// Bob cannot attach what he may not read.
	body := fmt.Sprintf(`{"text":"see","attachments":[{"sha256":%q}]}`, sum)
	e.create("bobs")
	e.grant("bobs", "bob", wire.AccessWrite)
	if code, _ := e.do("PUT", inputPath("bobs", 1), e.as(bob.Token), body, nil); code != 400 {
		t.Fatalf("bob attached ann's blob: %d", code)
	}
	// Naming the hash proves nothing; the bytes do.
	if code, _, _ := e.blobReq("PUT", sum, e.as(bob.Token), []byte("not it")); code != 400 {
		t.Fatalf("bob's PUT of other bytes: %d", code)
	}
	if get(e.as(bob.Token)) != 404 {
		t.Fatal("a failed PUT let bob read the blob")
	}

	body = fmt.Sprintf(`{"text":"","attachments":[{"sha256":%q,"name":"shot.png"}]}`, sum)
	if code, _ := e.do("PUT", inputPath("s1", 1), e.as(ann.Token), body, nil); code != http.StatusAccepted {
		t.Fatalf("ann's message with a file: %d", code)
	}
	evs := e.events("s1")
	msg := evs[len(evs)-1] // after the settings event of ann's grant
	if len(msg.Attachments) != 1 || msg.Attachments[0] != (wire.Attachment{SHA256: sum, Name: "shot.png", MIME: "image/png", Size: int64(len(pic))}) {
		t.Fatalf("the message carries %+v", msg.Attachments)
	}
	if get(nil) != 200 || get(e.as(bob.Token)) != 404 {
		t.Fatalf("carried by s1: the owner %d, bob %d", get(nil), get(e.as(bob.Token)))
	}
	e.grant("s1", "bob", wire.AccessRead)
	if get(e.as(bob.Token)) != 200 {
		t.Fatal("bob, who may read s1, may not read its file")
	}
	if l := e.link("s1", wire.LinkCreate{}); get(e.as(l.Token)) != 200 {
		t.Fatal("a link to s1 may not read its file")
	}
	if l := e.link("s2", wire.LinkCreate{}); get(e.as(l.Token)) != 404 {
		t.Fatal("a link to s2 reads s1's file")
	}
	// The bytes themselves prove holding them: bob, who may read no
	// session of this one, may read it after sending them.
	other := pngOf(21, 21)
	e.upload(other, "image/png", e.as(ann.Token), http.StatusCreated)
	if code, _, _ := e.blobReq("GET", sumOf(other), e.as(bob.Token), nil); code != 404 {
		t.Fatal("bob reads ann's upload")
	}
	e.upload(other, "image/png", e.as(bob.Token), http.StatusOK)
	if code, _, _ := e.blobReq("GET", sumOf(other), e.as(bob.Token), nil); code != 200 {
		t.Fatal("bob, having sent its bytes, may not read it")
	}
}

func TestAttachmentsAreChecked(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	pic := pngOf(8, 8)
	sum := e.upload(pic, "image/png", nil, http.StatusCreated).SHA256
	bad := func(what, atts string) {
		t.Helper()
		var eb wire.ErrorBody
		if code, _ := e.do("PUT", inputPath("s", 1), nil, `{"text":"x","attachments":`+atts+`}`, &eb); code != 400 || eb.Error == nil || eb.Error.Code != wire.CodeBadRequest {
			t.Fatalf("%s: %d %+v", what, code, eb)
		}
	}
	bad("an unknown blob", fmt.Sprintf(`[{"sha256":%q}]`, sumOf([]byte("never uploaded"))))
	bad("no sha256", `[{"name":"x"}]`)
	bad("twice the same", fmt.Sprintf(`[{"sha256":%q},{"sha256":%q}]`, sum, sum))
	bad("a path for a name", fmt.Sprintf(`[{"sha256":%q,"name":"../etc/passwd"}]`, sum))
	bad("a long name", fmt.Sprintf(`[{"sha256":%q,"name":%q}]`, sum, strings.Repeat("n", 256)))
	var many []string
	for i := range wire.MaxAttachments + 1 {
		many = append(many, fmt.Sprintf(`{"sha256":%q}`, sumOf([]byte{byte(i)})))
	}
	bad("17 attachments", "["+strings.Join(many, ",")+"]")
	if code, _ := e.do("PUT", inputPath("s", 2), nil, `{"text":""}`, nil); code != 400 {
		t.Fatalf("no text and no file: %d", code)
	}
	if evs := e.events("s"); len(evs) != 0 {
		t.Fatalf("refused inputs left %d events", len(evs))
	}
	// A name it was not given is made from its hash and type.
	if code, _ := e.do("PUT", inputPath("s", 3), nil, fmt.Sprintf(`{"text":"","attachments":[{"sha256":%q}]}`, sum), nil); code != http.StatusAccepted {
		t.Fatalf("a file alone: %d", code)
	}
	if a := e.events("s")[0].Attachments; len(a) != 1 || a[0].Name != sum[:12]+".png" {
		t.Fatalf("unnamed: %+v", a)
	}
}

// A fork carries its parent's files up to its fork point, and keeps them
// when the parent goes; the sweep removes only what no session carries.
func TestBlobsOfForksOutliveTheirParentAndTheSweep(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("p")
	first, later, loose := pngOf(9, 9), pngOf(10, 10), pngOf(11, 11)
	for _, b := range [][]byte{first, later, loose} {
		e.upload(b, "image/png", nil, http.StatusCreated)
	}
	for i, b := range [][]byte{first, later} {
		body := fmt.Sprintf(`{"text":"%d","attachments":[{"sha256":%q}]}`, i, sumOf(b))
		if code, _ := e.do("PUT", inputPath("p", i+1), nil, body, nil); code != http.StatusAccepted {
			t.Fatalf("input %d: %d", i, code)
		}
	}
	evs := e.events("p")
	at := evs[0].Offset
	fork, _ := e.forkOf("p", fmt.Sprintf(`{"at":%d}`, at), http.StatusCreated)
	if code, _ := e.do("DELETE", "/v1/sessions/p", nil, "", nil); code != http.StatusNoContent {
		t.Fatalf("delete the parent: %d", code)
	}
	mate := e.member("mate", false)
	e.grant(fork.ID, "mate", wire.AccessRead)
	if code, _, _ := e.blobReq("GET", sumOf(first), e.as(mate.Token), nil); code != 200 {
		t.Fatalf("the fork's file, its parent deleted: %d", code)
	}
	if code, _, _ := e.blobReq("GET", sumOf(later), e.as(mate.Token), nil); code != 404 {
		t.Fatalf("a file after the fork point, to a reader of the fork: %d", code)
	}
	blobs, _, err := e.hub.Blobs().Sweep(context.Background(), 0, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	// later went with its session; loose was never carried.
	if blobs != 2 {
		t.Fatalf("the sweep removed %d blobs, want 2", blobs)
	}
	if code, _, _ := e.blobReq("GET", sumOf(first), e.as(mate.Token), nil); code != 200 {
		t.Fatalf("the sweep removed the fork's file: %d", code)
	}
	if _, err := e.hub.Blobs().Get(context.Background(), sumOf(loose)); err == nil {
		t.Fatal("the sweep left a blob no session carries")
	}
}

// A bot posts a file it uploaded, over the websocket; one it did not
// upload and may not read is refused, and nothing is posted.
func TestABotPostsAFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	s := e.create("s")
	tok := e.botToken("charts", "s")
	chart := pngOf(30, 10)
	e.upload(chart, "image/png", e.as(tok), http.StatusCreated)
	foreign := pngOf(31, 10)
	e.upload(foreign, "image/png", nil, http.StatusCreated) // the owner's, carried by no session
	b := e.dialToken(tok).HelloFromStart(s)
	b.Send(wire.Command{ID: 1, Op: wire.OpPost, Session: "s", InputID: "0190a8a0-0000-7000-8000-0000000000b1",
		Attachments: []wire.Attachment{{SHA256: sumOf(foreign)}}})
	frames := b.Until(isReplyTo(1))
	if rep := frames[len(frames)-1].Reply; rep.OK || rep.Error.Code != wire.CodeBadRequest {
		t.Fatalf("a post of a blob the bot may not read: %+v", rep)
	}
	b.Send(wire.Command{ID: 2, Op: wire.OpPost, Session: "s", InputID: "0190a8a0-0000-7000-8000-0000000000b2", Text: "this week",
		Attachments: []wire.Attachment{{SHA256: sumOf(chart), Name: "week.png"}}})
	frames = b.Until(isReplyTo(2))
	if rep := frames[len(frames)-1].Reply; !rep.OK {
		t.Fatalf("post: %+v", rep.Error)
	}
	evs := e.events("s")
	if len(evs) != 1 || evs[0].Role != wire.RoleBot || len(evs[0].Attachments) != 1 || evs[0].Attachments[0].Name != "week.png" || evs[0].Attachments[0].MIME != "image/png" {
		t.Fatalf("the session holds %+v", evs)
	}
}

// A bot's tool result carries a file it uploaded: the tool_result event
// has it, and the model is told its name; one the bot may not read is
// refused and the call waits for a good answer.
func TestAToolResultCarriesAFile(t *testing.T) {
	t.Parallel()
	e, f := toolEnv(t, provider.ToolsConfig{Rules: []provider.ToolRule{{Match: "*", Policy: "allow"}}})
	tok := e.botToken("charts")
	bot := e.toolBotOf(tok, wire.ToolSpec{Name: "plot", Description: "A chart.", InputSchema: json.RawMessage(`{"type":"object"}`)})
	s := e.create("s")
	watcher := e.dial(true).HelloFromStart(s)
	chart := pngOf(20, 20)
	e.upload(chart, "image/png", e.as(tok), http.StatusCreated)
	foreign := pngOf(21, 20)
	e.upload(foreign, "image/png", nil, http.StatusCreated)
	f.Push(fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{ID: "c1", Name: "bot__charts__plot", Arguments: `{}`}}},
		fakeopenai.Reply{Chunks: []string{"Here it is."}})
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"plot it"}`, &r)
	push := bot.Next(func(f wire.Frame) bool { return f.Op == wire.PushTool })
	bot.Send(wire.Command{ID: 3, Op: wire.OpToolResult, CallID: push.Tool.CallID, Output: "drawn",
		Attachments: []wire.Attachment{{SHA256: sumOf(foreign)}}})
	if rep := bot.Reply(3); rep.OK || rep.Error.Code != wire.CodeBadRequest {
		t.Fatalf("a result with a blob the bot may not read: %+v", rep)
	}
	bot.Send(wire.Command{ID: 4, Op: wire.OpToolResult, CallID: push.Tool.CallID, Output: "drawn",
		Attachments: []wire.Attachment{{SHA256: sumOf(chart), Name: "chart.png"}}})
	if rep := bot.Reply(4); !rep.OK {
		t.Fatalf("tool_result: %+v", rep.Error)
	}
	streamed(watcher, r.TurnID, "")
	var res wire.Event
	for _, ev := range e.events("s") {
		if ev.Type == wire.EventToolResult {
			res = ev
		}
	}
	if res.State != wire.ToolCompleted || len(res.Attachments) != 1 || res.Attachments[0].Name != "chart.png" || res.Attachments[0].MIME != "image/png" {
		t.Fatalf("the result: %+v", res)
	}
	if code, _, _ := e.blobReq("GET", sumOf(chart), e.as(e.viewerToken("s")), nil); code != 200 {
		t.Fatalf("a viewer of the session reads the result's file: %d", code)
	}
	if reqs := f.Requests(); len(reqs) != 2 || !strings.Contains(string(reqs[1].Messages[len(reqs[1].Messages)-1]), `chart.png`) {
		t.Fatalf("the model was not told of the file: %s", reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1])
	}
}

// A bot's reply carries files it uploaded: given with any piece, refused
// (and the turn still the bot's) for a blob it may not read or past 16
// in all, dropped with the text when the reply starts over on another
// connection, and carried by the message its done commits, which a
// viewer of the session may then read.
func TestABotsReplyCarriesFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	tok := e.botToken("charts")
	s := e.createWith("s", `{"provider":"bot:charts"}`)
	viewer := e.viewerToken("s")
	var sums []string
	for i := range wire.MaxAttachments + 1 {
		pic := pngOf(20+i, 10)
		e.upload(pic, "image/png", e.as(tok), http.StatusCreated)
		sums = append(sums, sumOf(pic))
	}
	foreign := pngOf(99, 10)
	e.upload(foreign, "image/png", nil, http.StatusCreated)
	w := e.dial(true).HelloFromStart(s)
	var r wire.Receipt
	e.do("PUT", inputPath("s", 1), nil, `{"text":"plot it"}`, &r)

	// The first connection attaches a file, and drops: it goes with the text.
	b1 := e.dialToken(tok)
	b1.Hello()
	b1.Send(wire.Command{ID: 1, Op: wire.OpServe})
	b1.Next(func(f wire.Frame) bool { return f.Op == wire.PushTurn })
	b1.Send(wire.Command{ID: 2, Op: wire.OpReply, TurnID: r.TurnID, Text: "lost", Attachments: []wire.Attachment{{SHA256: sums[16], Name: "lost.png"}}})
	if rep := b1.Reply(2); !rep.OK {
		t.Fatalf("reply: %+v", rep.Error)
	}
	b1.Conn.CloseNow()

	b := e.dialToken(tok)
	b.Hello()
	b.Send(wire.Command{ID: 1, Op: wire.OpServe})
	b.Next(func(f wire.Frame) bool { return f.Op == wire.PushTurn && f.Turn.TurnID == r.TurnID })
	reply := func(id int64, done bool, text string, sums ...string) wire.Reply {
		t.Helper()
		cmd := wire.Command{ID: id, Op: wire.OpReply, TurnID: r.TurnID, Text: text, Done: done}
		for i, s := range sums {
			cmd.Attachments = append(cmd.Attachments, wire.Attachment{SHA256: s, Name: fmt.Sprintf("chart-%d.png", i)})
		}
		b.Send(cmd)
		return b.Reply(id)
	}
	if rep := reply(2, true, "", sumOf(foreign)); rep.OK || rep.Error.Code != wire.CodeBadRequest {
		t.Fatalf("a reply with a blob the bot may not read: %+v", rep)
	}
	if rep := reply(3, false, "here ", sums[:10]...); !rep.OK {
		t.Fatalf("a piece with ten files: %+v", rep.Error)
	}
	if rep := reply(4, true, "", sums[10:]...); rep.OK || rep.Error.Code != wire.CodeBadRequest || !strings.Contains(rep.Error.Message, "at most 16") {
		t.Fatalf("seventeen files in all: %+v", rep)
	}
	if rep := reply(5, true, "they are", sums[10]); !rep.OK {
		t.Fatalf("the end, after a refused one: %+v", rep.Error)
	}
	_, evs := streamed(w, r.TurnID, "")
	msg := evs[len(evs)-2]
	if msg.Type != wire.EventMessage || msg.Text != "here they are" || len(msg.Attachments) != 11 ||
		msg.Attachments[0] != (wire.Attachment{SHA256: sums[0], Name: "chart-0.png", MIME: "image/png", Size: int64(len(pngOf(20, 10)))}) ||
		msg.Attachments[10].SHA256 != sums[10] {
		t.Fatalf("the reply %+v", msg)
	}
	if code, _, _ := e.blobReq("GET", sums[3], e.as(viewer), nil); code != http.StatusOK {
		t.Fatalf("a viewer reads the reply's file: %d", code)
	}
	if code, _, _ := e.blobReq("GET", sums[16], e.as(viewer), nil); code != http.StatusNotFound {
		t.Fatalf("a viewer reads the dropped file: %d", code)
	}
}
