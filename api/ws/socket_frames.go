package ws

import "math"

// inFrames follows the frames of what a leanConn hands to coder/websocket,
// so that no Read hands out a byte past the end of the frame it is in.
// Then, once the library has read a whole message, its bufio.Reader holds
// nothing of the next frame: every byte not yet read is the socket's or
// the leanConn's own, and the reader's goroutine can wait for the next
// frame outside the library (leanConn.await), with the shallow stack an
// idle connection keeps.
//
// It reads only the bytes that say a frame's length (frameLen); whether
// the frame is valid is the library's to judge. A length no frame may
// have (over 2^62) makes the frame unbounded: the library refuses it.
type inFrames struct {
	pos  int64    // bytes of the current frame handed out
	flen int64    // the current frame's length, once its first bytes say it; 0 before
	hdr  [10]byte // the current frame's first bytes, while its length is not known
}

// lenBytes is how many of a frame's first bytes say its length, given
// the first ones known (p).
func lenBytes(p []byte) int {
	if len(p) < 2 {
		return 2
	}
	switch p[1] & 0x7f {
	case 126:
		return 4
	case 127:
		return 10
	}
	return 2
}

// atBoundary says whether everything handed out so far ends a frame.
func (f *inFrames) atBoundary() bool { return f.pos == 0 && f.flen == 0 }

// limit is how many bytes may be handed out next, at most: those up to
// the current frame's end, as far as what was handed out and ahead (the
// bytes that come next, as far as they are known) say where it is.
func (f *inFrames) limit(ahead []byte) int64 {
	if f.flen != 0 {
		return f.flen - f.pos
	}
	var b [10]byte
	n := copy(b[:], f.hdr[:f.pos])
	n += copy(b[n:], ahead)
	need := lenBytes(b[:n])
	if n < need {
		return int64(need) - f.pos // the length is not known yet: only the bytes that say it
	}
	l, ok := frameLen(b[:n])
	if !ok {
		return math.MaxInt64
	}
	return l - f.pos
}

// advance follows b, the bytes just handed out (no more than limit
// allowed).
func (f *inFrames) advance(b []byte) {
	for len(b) > 0 {
		if f.flen == 0 {
			k := min(len(b), lenBytes(f.hdr[:f.pos])-int(f.pos))
			copy(f.hdr[f.pos:], b[:k])
			f.pos += int64(k)
			b = b[k:]
			if int(f.pos) < lenBytes(f.hdr[:f.pos]) {
				continue // more of the length to come
			}
			l, ok := frameLen(f.hdr[:f.pos])
			if !ok {
				l = math.MaxInt64
			}
			f.flen = l
		} else {
			k := min(int64(len(b)), f.flen-f.pos)
			f.pos += k
			b = b[k:]
		}
		if f.pos == f.flen {
			f.pos, f.flen = 0, 0
		}
	}
}
