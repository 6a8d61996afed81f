package ws

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"albedo/wire"
)

// upgradeRaw is askUpgrade of e with a read deadline.
func upgradeRaw(t *testing.T, e *env, header ...string) net.Conn {
	t.Helper()
	c := askUpgrade(t, e.url, header...)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	return c
}

func helloHeader(cmd wire.Command) string {
	return wire.HelloHeader + ": " + base64.RawURLEncoding.EncodeToString(wire.Encode(cmd))
}

// A hello carried in the upgrade's request is answered with the 101: the
// response says it was taken, and the hello's reply with its sub's first
// pushes (a reset with the session's last events) is the first message, in the same
// write as the 101 — one read finds the head and the whole message. Before
// the daemon took such a hello the client waited for the 101, sent its
// hello, and waited again: a round trip more, and a write and two reads
// more for the daemon, a reconnect's dearest steps.
func TestAHelloInTheUpgradeIsAnsweredWithThe101(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	e.input("s", 1, "before the reconnect")
	c := upgradeRaw(t, e, "Authorization: Bearer "+testToken,
		helloHeader(wire.Command{ID: 7, Op: wire.OpHello, Client: "early", Subs: []wire.Sub{{Session: "s"}}}))
	buf := make([]byte, 64<<10)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	head, rest, ok := bytes.Cut(buf[:n], []byte("\r\n\r\n"))
	if !ok {
		t.Fatalf("the first read holds no whole head: %q", buf[:n])
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(append(head, "\r\n\r\n"...))), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get(wire.HelloHeader) != wire.HelloTaken {
		t.Fatalf("response %d, %s: %q; want 101 and %q", resp.StatusCode, wire.HelloHeader, resp.Header.Get(wire.HelloHeader), wire.HelloTaken)
	}
	if len(rest) < 2 || rest[0] != 0x81 {
		t.Fatalf("no text frame came with the 101: %q", rest)
	}
	size, hdr := int(rest[1]&0x7f), 2
	if size == 126 {
		size, hdr = int(binary.BigEndian.Uint16(rest[2:])), 4
	}
	// The first read holds the first message whole (and, on a loaded
	// machine, maybe what the daemon wrote after it): it came with the
	// 101. TestAHeldUpgradeLeavesWithTheFirstWrite shows the one write.
	if len(rest) < hdr+size {
		t.Fatalf("the first read holds %d bytes after the head; the first message is %d: it did not come with the 101", len(rest), hdr+size)
	}
	rest = rest[:hdr+size]
	lines := bytes.Split(rest[hdr:], []byte("\n"))
	var r wire.Reply
	if err := json.Unmarshal(lines[0], &r); err != nil || r.ID != 7 || !r.OK || len(r.Subs) != 1 || !r.Subs[0].OK {
		t.Fatalf("first line %s (%v); want hello 7's reply with its sub attached", lines[0], err)
	}
	if !bytes.Contains(rest, []byte("before the reconnect")) {
		t.Fatalf("the sub's events did not come with the reply: %s", rest[hdr:])
	}
	// The connection goes on as any other: a command is answered.
	ping := []byte(`{"id":8,"op":"ping"}`)
	frame := append([]byte{0x81, 0x80 | byte(len(ping)), 0, 0, 0, 0}, ping...) // masked with zeros
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
	for {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("no reply to a ping after an early hello: %v", err)
		}
		if bytes.Contains(buf[:n], []byte(`{"id":8,"ok":true`)) {
			return
		}
	}
}

// A token may ride in the early hello, as in a frame's; a bad one closes
// the connection with 4401 once the 101 is written, as a frame's does.
func TestAnEarlyHellosBadTokenIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	c := upgradeRaw(t, e, helloHeader(wire.Command{ID: 1, Op: wire.OpHello, Token: "nope"}))
	b, _ := io.ReadAll(c)
	if !bytes.HasPrefix(b, []byte("HTTP/1.1 101")) {
		t.Fatalf("got %q, want the 101", b)
	}
	_, frame, _ := bytes.Cut(b, []byte("\r\n\r\n"))
	if len(frame) < 4 || frame[0] != 0x88 || binary.BigEndian.Uint16(frame[2:]) != uint16(StatusBadToken) {
		t.Fatalf("after the 101: %q; want a close with %d", frame, StatusBadToken)
	}
}

// A header that is not one hello of at most wire.MaxHelloHeader bytes in
// base64url is refused before the upgrade, with 400 and what was wrong.
func TestABadHelloHeaderIsRefusedBeforeTheUpgrade(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	big := wire.Command{ID: 1, Op: wire.OpHello, Client: strings.Repeat("x", wire.MaxHelloHeader)}
	for _, tc := range []struct {
		name, want string
		header     []string
	}{
		{"not base64", "base64url", []string{wire.HelloHeader + ": {\"id\":1}"}},
		{"not hello", "only hello", []string{helloHeader(wire.Command{ID: 1, Op: wire.OpPing})}},
		{"no id", "id must be", []string{helloHeader(wire.Command{Op: wire.OpHello})}},
		{"too large", "the limit is", []string{helloHeader(big)}},
		{"twice", "2 times", []string{helloHeader(wire.Command{ID: 1, Op: wire.OpHello}), helloHeader(wire.Command{ID: 2, Op: wire.OpHello})}},
	} {
		c := upgradeRaw(t, e, append([]string{"Authorization: Bearer " + testToken}, tc.header...)...)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var body wire.ErrorBody
		json.NewDecoder(resp.Body).Decode(&body)
		if resp.StatusCode != http.StatusBadRequest || body.Error == nil || body.Error.Code != wire.CodeBadRequest || !strings.Contains(body.Error.Message, tc.want) {
			t.Fatalf("%s: %d %+v; want 400 bad_request saying %q", tc.name, resp.StatusCode, body.Error, tc.want)
		}
	}
}
