package client

import (
	"context"
	"fmt"
	"time"

	"albedo/wire"
)

// FeedItems reads the sessions feed once, every page of it: each session
// the token may see as a sidebar shows it (its unread count for the
// caller, its last activity), most recently active first. It opens a
// stream of its own for it and closes it before returning. A token that
// may not follow the feed (a bot's, a link's) gets the daemon's refusal.
func (c *Client) FeedItems(ctx context.Context) ([]wire.FeedItem, error) {
	up := make(chan State, 1)
	st := c.Stream(StreamOptions{
		Budget: 10 * time.Second,
		OnState: func(s State) {
			if s.Phase == Connected || s.Phase.WaitsForUser() {
				select {
				case up <- s:
				default:
				}
			}
		},
	})
	defer st.Close()
	select {
	case s := <-up:
		if s.Phase != Connected {
			return nil, fmt.Errorf("sessions feed: %s: %w", s.Phase, cmpErr(s.Err, ErrUnavailable))
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	first, err := st.feedCommand(ctx, "sessions feed", wire.Command{Op: wire.OpFeed, Limit: wire.MaxFeedPage})
	if err != nil {
		return nil, err
	}
	items := first.Sessions
	for next := first.Next; next != ""; {
		page, err := st.FeedPage(ctx, next, wire.MaxFeedPage)
		if err != nil {
			return nil, err
		}
		items, next = append(items, page.Sessions...), page.Next
	}
	return items, nil
}

// feedCommand sends cmd (feed or feed_page; what names it in an error)
// on the stream's connection and waits for its reply.
func (st *Stream) feedCommand(ctx context.Context, what string, cmd wire.Command) (wire.FeedReply, error) {
	st.mu.Lock()
	sc := st.conn
	st.mu.Unlock()
	if sc == nil {
		return wire.FeedReply{}, fmt.Errorf("%s: not connected: %w", what, ErrUnavailable)
	}
	done := make(chan wire.Reply, 1)
	sc.command(cmd, func(r wire.Reply) { done <- r })
	select {
	case r := <-done:
		if !r.OK {
			return wire.FeedReply{}, r.Error
		}
		if r.Feed == nil {
			return wire.FeedReply{}, nil
		}
		return *r.Feed, nil
	case <-ctx.Done():
		return wire.FeedReply{}, ctx.Err()
	case <-st.ctx.Done():
		return wire.FeedReply{}, ErrStreamClosed
	}
}

func cmpErr(err, alt error) error {
	if err != nil {
		return err
	}
	return alt
}
