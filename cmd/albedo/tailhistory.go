package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"albedo/client"
	"albedo/wire"
)

// parseLines reads tail's -n as tail(1) does: N is the last N messages,
// +N the events from offset N on (from > 0).
func parseLines(v string, given bool) (n int, from int64, err error) {
	if !given {
		return 0, 0, nil
	}
	if rest, ok := strings.CutPrefix(v, "+"); ok {
		from, err = strconv.ParseInt(rest, 10, 64)
		if err != nil || from < 1 {
			return 0, 0, usageErrorf("-n +N starts at event #N: N is a whole number from 1, not %q", rest)
		}
		return 0, from, nil
	}
	n, err = strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, 0, usageErrorf("-n takes how many messages to print (a whole number, 0 or more) or +N (from event #N), not %q", v)
	}
	return n, 0, nil
}

// printHistory prints, as tail does, s's events from offset from on, or
// (from 0) its last n messages and what tail shows between and after
// them. It returns the offset it printed up to, s's head when it was
// named: where following goes on.
func printHistory(ctx context.Context, g *globals, c *client.Client, s wire.Session, n int, from int64) (int64, error) {
	var evs []wire.Event
	var err error
	if from > 0 {
		evs, err = eventsFrom(ctx, c, s, from)
	} else {
		evs, err = lastMessages(ctx, c, s, n)
	}
	if err != nil {
		return 0, err
	}
	for i := range evs {
		if line, ok := tailLine(&evs[i]); ok {
			fmt.Fprintln(g.stdout, line)
		}
	}
	return s.Head, nil
}

// lastMessages reads s's history backwards from its head until it holds n
// messages (or the start), and returns the events from the first of them
// on, oldest first.
func lastMessages(ctx context.Context, c *client.Client, s wire.Session, n int) ([]wire.Event, error) {
	var back []wire.Event // newest first
	msgs := 0
	for before := s.Head + 1; msgs < n && before > 1; {
		p, err := c.History(ctx, s.ID, 0, before, 1000)
		if err != nil {
			return nil, err
		}
		for i := len(p.Events) - 1; i >= 0 && msgs < n; i-- {
			ev := p.Events[i]
			if ev.Offset > s.Head {
				continue // committed after the session was read: following shows it
			}
			back = append(back, ev)
			if ev.Type == wire.EventMessage {
				msgs++
			}
		}
		if len(p.Events) == 0 || !p.More {
			break
		}
		before = p.Events[0].Offset
	}
	slices.Reverse(back)
	return back, nil
}

// eventsFrom reads s's events from offset from up to its head.
func eventsFrom(ctx context.Context, c *client.Client, s wire.Session, from int64) ([]wire.Event, error) {
	var out []wire.Event
	for after := from - 1; after < s.Head; {
		p, err := c.History(ctx, s.ID, after, 0, 1000)
		if err != nil {
			return nil, err
		}
		for _, ev := range p.Events {
			if ev.Offset <= s.Head {
				out = append(out, ev)
			}
		}
		if len(p.Events) == 0 || !p.More {
			break
		}
		after = p.Events[len(p.Events)-1].Offset
	}
	return out, nil
}
