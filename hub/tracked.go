package hub

// goTracked runs f on a goroutine that Close waits for, and says whether
// it started: once Close has begun, nothing starts (f does not run), so
// that no goroutine of the hub's outlives the store it uses. f must end
// soon after h.ctx does.
//
// A sync.WaitGroup may not be added to while its count is zero and Wait
// runs; the lock and the closing flag make every Add happen before
// Close's Wait, or not at all.
func (h *Hub) goTracked(f func()) bool {
	h.trackMu.Lock()
	defer h.trackMu.Unlock()
	if h.closing {
		return false
	}
	h.loops.Add(1)
	go func() {
		defer h.loops.Done()
		f()
	}()
	return true
}

// stopTracking makes goTracked start nothing more; Close calls it before
// it waits for the loops.
func (h *Hub) stopTracking() {
	h.trackMu.Lock()
	h.closing = true
	h.trackMu.Unlock()
}
