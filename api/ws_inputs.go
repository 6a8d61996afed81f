package api

import (
	"context"

	"albedo/api/wire"
)

// maxInFlight bounds the inputs (send and post) one connection may have
// waiting for their commit. Past it, the reader waits for the oldest
// receipt before it reads on.
const maxInFlight = 64

// inFlight hands an input the hub has queued for commit to the
// connection's receipt goroutine, which sends its receipt once it is
// committed. Inputs are queued in the order they are read, so they are
// accepted in that order, and their receipts are sent in it. The reader
// reads the next command meanwhile: a client may have many inputs in
// flight on one socket, and they share group commits. Any other command
// waits until the inputs before it are answered (handle). Called by the
// reader only.
func (wc *wsConn) inFlight(ctx context.Context, id int64, wait func() (wire.Receipt, error)) {
	if wc.receipts == nil {
		// Started on the first input: a connection that never sends one
		// (a viewer) pays no goroutine for it.
		wc.receipts = make(chan func(), maxInFlight-1)
		wc.group.Go(func() error {
			for answer := range wc.receipts {
				answer()
			}
			return nil
		})
	}
	wc.inflight.Add(1)
	answer := func() {
		defer wc.inflight.Done()
		r, err := wait()
		wc.replyReceipt(id, r, err)
	}
	select {
	case wc.receipts <- answer:
	case <-ctx.Done():
		// The connection is ending: answer here (the write was queued
		// and is waited for, so that nothing outlives the connection).
		answer()
	}
}

// endInputs lets the receipt goroutine finish the inputs in flight and
// end. Called by the reader once it has stopped reading.
func (wc *wsConn) endInputs() {
	if wc.receipts != nil {
		close(wc.receipts)
	}
}
