package ws

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"albedo/wire"
)

// An input whose connection ended before its commit (closed, or cut by
// the daemon's stop) fails with the connection's context: no one reads a
// reply, so none is sent, and it is no internal error in the daemon's log.
func TestAReceiptForAClosedConnectionIsNoInternalError(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wc := &conn{s: &Server{log: slog.New(slog.NewTextHandler(&logs, nil))}, ctx: ctx}
	wc.replyReceipt(7, "s", wire.Receipt{}, context.Canceled)
	if logs.Len() > 0 {
		t.Fatalf("the daemon's log: %s", logs.String())
	}
}
