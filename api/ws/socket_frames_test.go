package ws

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// clientFrames builds a stream of frames from spec, three bytes a frame
// (its first byte, the form of its length, a length) and the frames' ends;
// some lengths are written in a longer form than they need, which the
// tracker must follow as the bytes say.
func clientFrames(spec []byte) (stream []byte, ends []int) {
	for i := 0; i+3 <= len(spec) && len(ends) < 64; i += 3 {
		first, form, n := spec[i], spec[i+1], int(spec[i+2])
		masked := first&0x40 != 0
		var f []byte
		switch form % 3 {
		case 0:
			f = []byte{first, byte(n % 126)}
			n %= 126
		case 1:
			n += 100
			f = binary.BigEndian.AppendUint16([]byte{first, 126}, uint16(n))
		case 2:
			f = binary.BigEndian.AppendUint64([]byte{first, 127}, uint64(n))
		}
		if masked {
			f[1] |= 0x80
			f = append(f, 1, 2, 3, 4)
		}
		f = append(f, bytes.Repeat([]byte{byte(i)}, n)...)
		stream = append(stream, f...)
		ends = append(ends, len(stream))
	}
	return stream, ends
}

// FuzzInFrames: whatever sizes the bytes arrive in and are asked for,
// inFrames hands every byte out once, in order, none past the end of the
// frame it is in, and says it is at a frame's boundary exactly at one.
func FuzzInFrames(f *testing.F) {
	f.Add([]byte{0x81, 0, 5, 0x89, 0, 0, 0x82, 1, 3, 0xc1, 2, 1}, []byte{1, 16, 3, 200, 7})
	f.Add([]byte{0x8a, 0, 0, 0x88, 0, 2}, []byte{0})
	f.Add([]byte{0x81, 2, 255, 0x01, 1, 0, 0x80, 0, 125}, []byte{16, 16, 16, 255})
	f.Fuzz(func(t *testing.T, spec, sizes []byte) {
		stream, ends := clientFrames(spec)
		end := make(map[int]bool, len(ends))
		for _, e := range ends {
			end[e] = true
		}
		size := func(i int) int { // the next size of sizes, 1 or more
			if len(sizes) == 0 {
				return 16
			}
			return int(sizes[i%len(sizes)]) + 1
		}
		var fr inFrames
		var got []byte
		var pending []byte
		arrived, step := 0, 0
		for len(got) < len(stream) {
			if len(got) > 0 && fr.atBoundary() != end[len(got)] {
				t.Fatalf("at %d of %d: atBoundary %v, a frame's end %v", len(got), len(stream), fr.atBoundary(), end[len(got)])
			}
			if len(pending) == 0 {
				n := min(size(step), len(stream)-arrived)
				pending = stream[arrived : arrived+n]
				arrived += n
				step++
			}
			ask := size(step)
			step++
			lim := fr.limit(pending)
			if lim <= 0 {
				t.Fatalf("at %d: limit %d", len(got), lim)
			}
			n := int(min(int64(ask), int64(len(pending)), lim))
			for e := len(got) + 1; e < len(got)+n; e++ {
				if end[e] {
					t.Fatalf("handed out %d..%d, past a frame's end at %d", len(got), len(got)+n, e)
				}
			}
			fr.advance(pending[:n])
			got = append(got, pending[:n]...)
			pending = pending[n:]
		}
		if !bytes.Equal(got, stream) {
			t.Fatalf("handed out %x, want %x", got, stream)
		}
		if len(stream) > 0 && !fr.atBoundary() {
			t.Fatalf("at the stream's end, not at a boundary: %+v", fr)
		}
	})
}
