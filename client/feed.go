package client

import (
	"context"

	"albedo/wire"
)

// FeedUpdate is what the sessions feed says (docs/protocol.md, "The
// sessions feed"): a first page (Start: drop what was held of the feed),
// sessions changed, sessions gone, or the person's read marker set
// somewhere (Read).
type FeedUpdate struct {
	Start    bool
	Sessions []wire.FeedItem
	Gone     []string
	// Revoked is those of Gone no longer the person's to see (a grant
	// taken back); the rest were deleted.
	Revoked []string
	// Next reads the page after a first page (FeedPage); "" at the end.
	Next string
	Read *wire.ReadPush
}

// startFeed asks for the feed on a connection whose hello succeeded,
// from where the last connection's left off.
func (sc *streamConn) startFeed() {
	st := sc.st
	st.mu.Lock()
	pos := st.feedPos
	st.mu.Unlock()
	sc.command(wire.Command{Op: wire.OpFeed, Pos: pos, Limit: st.opts.FeedPage}, func(r wire.Reply) {
		if !r.OK || r.Feed == nil {
			return // a token that may not follow it: nothing to show
		}
		st.feedAt(r.Feed.Pos)
		if !r.Feed.Resumed {
			st.opts.OnFeed(FeedUpdate{Start: true, Sessions: r.Feed.Sessions, Next: r.Feed.Next})
		}
	})
}

// feedAt keeps the newest position of the feed.
func (st *Stream) feedAt(pos string) {
	if pos == "" {
		return
	}
	st.mu.Lock()
	st.feedPos = pos
	st.mu.Unlock()
}

// feedPush hands a feed push to OnFeed.
func (st *Stream) feedPush(p *wire.FeedPush) {
	st.feedAt(p.Pos)
	st.opts.OnFeed(FeedUpdate{Sessions: p.Sessions, Gone: p.Gone, Revoked: p.Revoked})
}

// FeedPage reads the page of the feed after cursor (a FeedUpdate's or a
// page's Next), on the stream's connection.
func (st *Stream) FeedPage(ctx context.Context, cursor string, limit int) (wire.FeedReply, error) {
	return st.feedCommand(ctx, "feed page", wire.Command{Op: wire.OpFeedPage, Cursor: cursor, Limit: limit})
}
