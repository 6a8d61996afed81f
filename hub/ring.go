package hub

// entry is one committed event ready to write: its offset, its whole push
// frame already encoded, and, for a turn's closing event, the turn's id (so a
// writer can drop deltas the committed reply has made stale).
type entry struct {
	offset  int64
	frame   []byte
	turnEnd string
}

// ring holds a channel's most recent events, contiguous by offset. It is
// guarded by its channel's mutex. Its buffer grows on demand up to size
// entries: most watched sessions are quiet, and a full-size buffer for
// each would be most of an idle connection's memory.
type ring struct {
	buf      []entry
	start    int // index of the oldest entry
	n        int
	size     int // the most entries it holds
	bytes    int // sum of the frames held
	maxBytes int // evict the oldest beyond this, whatever n is
}

// ringFirstAlloc is the buffer a ring starts with at its first push.
const ringFirstAlloc = 8

func newRing(size, maxBytes int) ring { return ring{size: size, maxBytes: maxBytes} }

// grow doubles the buffer (up to size), oldest entry first.
func (r *ring) grow() {
	nb := make([]entry, min(r.size, max(ringFirstAlloc, 2*len(r.buf))))
	for i := range r.n {
		nb[i] = r.buf[(r.start+i)%len(r.buf)]
	}
	r.buf, r.start = nb, 0
}

func (r *ring) first() int64 {
	if r.n == 0 {
		return 0
	}
	return r.buf[r.start].offset
}

func (r *ring) last() int64 {
	if r.n == 0 {
		return 0
	}
	return r.buf[(r.start+r.n-1)%len(r.buf)].offset
}

// push appends e. If e does not follow the newest entry the ring restarts at
// e: a ring is a cache, and the database has whatever it drops.
func (r *ring) push(e entry) {
	if r.size <= 0 {
		return
	}
	if r.n > 0 && e.offset != r.last()+1 {
		r.reset()
	}
	if r.n == len(r.buf) && len(r.buf) < r.size {
		r.grow()
	}
	for r.n == len(r.buf) || (r.n > 0 && r.bytes+len(e.frame) > r.maxBytes) {
		r.dropOldest()
	}
	r.buf[(r.start+r.n)%len(r.buf)] = e
	r.n++
	r.bytes += len(e.frame)
}

func (r *ring) dropOldest() {
	r.bytes -= len(r.buf[r.start].frame)
	r.buf[r.start] = entry{}
	r.start = (r.start + 1) % len(r.buf)
	r.n--
}

// from appends to out up to limit entries starting at offset next, none
// past the one that brings their frames to maxBytes (the first whatever its
// size), and says whether the ring could serve next at all.
func (r *ring) from(next int64, limit, maxBytes int, out []entry) ([]entry, bool) {
	if r.n == 0 || next < r.first() || next > r.last() {
		return out, false
	}
	size := 0
	for i := int(next - r.first()); i < r.n && limit > 0 && size < maxBytes; i++ {
		e := r.buf[(r.start+i)%len(r.buf)]
		out = append(out, e)
		size += len(e.frame)
		limit--
	}
	return out, true
}

func (r *ring) reset() {
	clear(r.buf)
	r.start, r.n, r.bytes = 0, 0, 0
}
