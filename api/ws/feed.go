package ws

import (
	"context"

	"albedo/hub"
	"albedo/wire"
)

// feed starts or resumes the connection's sessions feed; the hub queues
// its reply, before any feed push.
func (wc *conn) feed(ctx context.Context, cmd wire.Command) {
	if err := wc.hc.Feed(ctx, cmd.ID, wc.p, cmd.Pos, cmd.Limit); err != nil {
		wc.replyErr(cmd.ID, hub.AsError(wc.s.log, err, "op", wire.OpFeed))
	}
}

// feedPage answers with a later page of the feed.
func (wc *conn) feedPage(ctx context.Context, cmd wire.Command) {
	r, err := wc.hc.FeedPage(ctx, wc.p, cmd.Cursor, cmd.Limit)
	if err != nil {
		wc.replyErr(cmd.ID, hub.AsError(wc.s.log, err, "op", wire.OpFeedPage))
		return
	}
	wc.hc.ReplyJSON(wire.Reply{ID: cmd.ID, OK: true, Feed: &r})
}
