package ws

import (
	"context"

	"albedo/wire"
)

// maxInFlight bounds the inputs (send and post) one connection may have
// waiting for their commit. Past it, the reader waits for the oldest
// receipt before it reads on.
const maxInFlight = 64

// submit is hub.Hub.SubmitInput or SubmitPost.
type submit func(ctx context.Context, session, inputID, text string, atts []wire.Attachment, author wire.Author, then func(wire.Receipt, error)) error

// inFlight queues an input for commit and reads on: its receipt is queued
// by the database writer once the input is committed (hub.SubmitInput), so
// no goroutine waits for it. Inputs are queued in the order they are read,
// so they are accepted in that order and their receipts are sent in it; a
// client may have many in flight on one socket, and they share group
// commits. Any other command waits until the inputs before it are answered
// (handle), and so does an input refused before the database. Called by
// the reader only.
func (wc *conn) inFlight(ctx context.Context, cmd wire.Command, put submit) {
	if wc.slots == nil {
		wc.slots = make(chan struct{}, maxInFlight) // on the first input: viewers never pay for it
	}
	select {
	case wc.slots <- struct{}{}:
	case <-ctx.Done():
		return // the connection is ending; nothing was queued
	}
	wc.inflight.Add(1)
	id, session := cmd.ID, cmd.Session // not cmd: the closure would move the whole command to the heap
	var err error
	var atts []wire.Attachment
	if len(cmd.Attachments) > 0 {
		// Files are looked up in the store before the input is queued:
		// each must be a blob this principal may read.
		atts, err = wc.s.hub.Attachments(ctx, wc.p, cmd.Attachments)
	}
	if err == nil {
		err = put(ctx, cmd.Session, cmd.InputID, cmd.Text, atts, wc.p.Author(), func(r wire.Receipt, err error) {
			wc.replyReceipt(id, session, r, err)
			<-wc.slots
			wc.inflight.Done()
		})
	}
	if err != nil {
		// Refused before the database: answered after the inputs before it.
		<-wc.slots
		wc.inflight.Done()
		wc.inflight.Wait()
		wc.replyReceipt(id, session, wire.Receipt{}, err)
	}
}
