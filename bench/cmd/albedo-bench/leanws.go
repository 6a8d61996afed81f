package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"

	"albedo/wire"
)

// leanWS is the client side of a websocket as a crowd connection needs
// it, written by hand: an HTTP/1.1 upgrade and RFC 6455 frames, no
// extension. A crowd of 18 000 connections reconnecting at once runs on
// the tool's one CPU, and a general client (net/http's transport with its
// two goroutines and buffers a connection, then the library's reader) cost
// it more per reconnect than the server being measured; what the tool
// spends delays the storm it times. It is not safe for concurrent reads,
// nor for concurrent writes; a read and a write may run at once.
type leanWS struct {
	c  net.Conn
	r  *bufio.Reader
	wm sync.Mutex // one frame at a time: the reader's pongs and the owner's writes

	helloTaken bool // the 101 said the request's hello was taken (wire.HelloHeader)
}

// leanWSMaxMessage bounds a message the tool reads (a hello's reply with
// its subs, a page of events).
const leanWSMaxMessage = 16 << 20

// leanDial connects from d to host (host:port), upgrades path with the
// given extra header lines ("Name: value"), and returns the socket once the
// server has answered 101. ctx bounds the dial and the upgrade only.
func leanDial(ctx context.Context, d *net.Dialer, host, path string, header ...string) (*leanWS, error) {
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	ws, err := leanUpgrade(c, host, path, header)
	if !stop() || err != nil {
		c.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return ws, nil
}

func leanUpgrade(c net.Conn, host, path string, header []string) (*leanWS, error) {
	var key [16]byte
	rand.Read(key[:])
	var req bytes.Buffer
	fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: %s\r\n",
		path, host, base64.StdEncoding.EncodeToString(key[:]))
	for _, h := range header {
		req.WriteString(h)
		req.WriteString("\r\n")
	}
	req.WriteString("\r\n")
	if _, err := c.Write(req.Bytes()); err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(c, 2048)
	status, err := r.ReadSlice('\n')
	if err != nil {
		return nil, fmt.Errorf("upgrade: %w", err)
	}
	if f := strings.Fields(string(status)); len(f) < 2 || f[1] != "101" {
		return nil, fmt.Errorf("upgrade: expected handshake response status code 101 but got %q", strings.TrimSpace(string(status)))
	}
	ws := &leanWS{c: c, r: r}
	for { // the rest of the head: only whether the daemon took a hello
		line, err := r.ReadSlice('\n')
		if err != nil {
			return nil, fmt.Errorf("upgrade: %w", err)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			return ws, nil
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && strings.EqualFold(string(k), wire.HelloHeader) {
			ws.helloTaken = string(bytes.TrimSpace(v)) == wire.HelloTaken
		}
	}
}

// Close closes the socket without a closing handshake.
func (w *leanWS) Close() error { return w.c.Close() }

// WriteText sends p as one masked text frame.
func (w *leanWS) WriteText(p []byte) error { return w.writeFrame(0x1, p) }

func (w *leanWS) writeFrame(op byte, p []byte) error {
	f := make([]byte, 0, 14+len(p))
	f = append(f, 0x80|op)
	switch n := len(p); {
	case n < 126:
		f = append(f, 0x80|byte(n))
	case n <= 0xffff:
		f = append(f, 0x80|126)
		f = binary.BigEndian.AppendUint16(f, uint16(n))
	default:
		f = append(f, 0x80|127)
		f = binary.BigEndian.AppendUint64(f, uint64(n))
	}
	var mask [4]byte
	rand.Read(mask[:])
	f = append(f, mask[:]...)
	for i, b := range p {
		f = append(f, b^mask[i%4])
	}
	w.wm.Lock()
	defer w.wm.Unlock()
	_, err := w.c.Write(f)
	return err
}

// errLeanClosed is a close frame from the server.
var errLeanClosed = errors.New("websocket closed by the server")

// Read returns the next data message, whole, answering pings on the way.
// buf is reused for the message when it has room.
func (w *leanWS) Read(buf []byte) ([]byte, error) {
	msg := buf[:0]
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(w.r, hdr[:2]); err != nil {
			return nil, err
		}
		fin, op := hdr[0]&0x80 != 0, hdr[0]&0x0f
		if hdr[1]&0x80 != 0 {
			return nil, errors.New("websocket: a server's frame is masked")
		}
		n := uint64(hdr[1] & 0x7f)
		switch n {
		case 126:
			if _, err := io.ReadFull(w.r, hdr[:2]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(hdr[:2]))
		case 127:
			if _, err := io.ReadFull(w.r, hdr[:8]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(hdr[:8])
		}
		if n > leanWSMaxMessage || uint64(len(msg))+n > leanWSMaxMessage {
			return nil, fmt.Errorf("websocket: a message over %d bytes", leanWSMaxMessage)
		}
		if op >= 0x8 { // control: ping, pong, close; at most 125 bytes
			var ctl [125]byte
			if n > 125 {
				return nil, errors.New("websocket: a control frame over 125 bytes")
			}
			if _, err := io.ReadFull(w.r, ctl[:n]); err != nil {
				return nil, err
			}
			switch op {
			case 0x8:
				code := ctl[:0]
				if n >= 2 {
					code = ctl[:2] // echo its code; a 1-byte body is no code
				}
				w.writeFrame(0x8, code)
				return nil, errLeanClosed
			case 0x9:
				if err := w.writeFrame(0xA, ctl[:n]); err != nil {
					return nil, err
				}
			}
			continue
		}
		at := len(msg)
		msg = slices.Grow(msg, int(n))[:at+int(n)]
		if _, err := io.ReadFull(w.r, msg[at:]); err != nil {
			return nil, err
		}
		if fin {
			return msg, nil
		}
	}
}
